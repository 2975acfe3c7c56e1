import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { hashSecret } from '../../src/lib/secrets.js';
import { createUser } from '../../src/modules/accounts/accounts.service.js';
import { issueCsrfToken, verifyCsrfToken } from '../../src/web/csrf.js';
import { loadSession } from '../../src/web/session.js';
import { createTestApp, type TestApp, testConfig } from '../helpers/app.js';

let t: TestApp;
let aliceId: number;
const deps = () => ({ db: t.database.db, ctx: { config: t.config, clock: t.clock } });

beforeAll(async () => {
  t = await createTestApp();
  // A probe route, added before the app is ready, that reports what loadSession sees, and checks
  // that a second call in the same request is the same lookup.
  t.app.get('/test/session', { config: { auth: 'browser', description: 'test probe' } }, async (request) => {
    const first = loadSession(request, deps());
    const second = loadSession(request, deps());
    const session = await first;
    return { memoized: first === second, session };
  });
  // And one that issues a CSRF token and one that checks it, as other modules' forms do.
  t.app.get(
    '/test/csrf',
    { config: { auth: 'browser', description: 'test probe' } },
    async (request, reply) => {
      const token = issueCsrfToken(request, reply, deps().ctx);
      return { token, again: issueCsrfToken(request, reply, deps().ctx) };
    },
  );
  t.app.post(
    '/test/csrf',
    { config: { auth: 'browser', description: 'test probe', rateLimit: 'signin' } },
    async (request) => ({ valid: verifyCsrfToken(request, (request.body as { token?: unknown }).token) }),
  );
  aliceId = (
    await createUser(
      t.database.db,
      { config: t.config, clock: t.clock },
      { username: 'alice', password: 'correct horse battery' },
    )
  ).id;
});
afterAll(() => t.close());

function setCookieHeaders(res: LightMyRequestResponse): string[] {
  const header = res.headers['set-cookie'];
  return header === undefined ? [] : [header].flat();
}

function setCookie(res: LightMyRequestResponse, name: string): string | undefined {
  return setCookieHeaders(res).find((cookie) => cookie.startsWith(`${name}=`));
}

function cookieValue(res: LightMyRequestResponse, name: string): string | undefined {
  return res.cookies.find((cookie) => cookie.name === name)?.value;
}

/** Signs in through the real form; returns the response and the cookies it set. */
/** Signs in through the real form; `prefix` is the cookies' (`__Host-` when PUBLIC_URL is https). */
async function signIn(app: TestApp['app'], existingSession?: string, prefix = '') {
  const sessionCookie = `${prefix}idp_session`;
  const page = await app.inject({
    method: 'GET',
    url: '/signin',
    cookies: existingSession ? { [sessionCookie]: existingSession } : {},
  });
  const csrfCookie = cookieValue(page, `${prefix}idp_csrf`) as string;
  const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] as string;
  const res = await app.inject({
    method: 'POST',
    url: '/signin',
    cookies: {
      [`${prefix}idp_csrf`]: csrfCookie,
      ...(existingSession ? { [sessionCookie]: existingSession } : {}),
    },
    payload: { csrf_token: csrfToken, username: 'alice', password: 'correct horse battery' },
  });
  expect(res.statusCode).toBe(303);
  return { res, session: cookieValue(res, sessionCookie) as string, csrfCookie, csrfToken };
}

/** The CSRF token of a page seen by a signed-in browser (its forms are bound to its session). */
async function signedInToken(session: string, csrfCookie: string): Promise<string> {
  const page = await t.app.inject({
    method: 'GET',
    url: '/account',
    cookies: { idp_session: session, idp_csrf: csrfCookie },
  });
  expect(page.statusCode).toBe(200);
  return /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] as string;
}

async function probe(session: string | undefined) {
  const res = await t.app.inject({
    method: 'GET',
    url: '/test/session',
    cookies: session === undefined ? {} : { idp_session: session },
  });
  return res.json() as {
    memoized: boolean;
    session: { idHash: string; userId: number; authTime: string } | null;
  };
}

const sessionRows = () => t.database.db.selectFrom('browser_sessions').selectAll().execute();

describe('session cookie', () => {
  it('is HttpOnly, SameSite=Lax, Path=/, lives SESSION_TTL_SECONDS, and is not Secure over http', async () => {
    const { res } = await signIn(t.app);
    const cookie = setCookie(res, 'idp_session') as string;
    expect(cookie).toMatch(/^idp_session=[A-Za-z0-9_-]{43};/);
    const attributes = cookie.split('; ').slice(1);
    expect(attributes).toEqual(
      expect.arrayContaining([
        'HttpOnly',
        'SameSite=Lax',
        'Path=/',
        `Max-Age=${t.config.SESSION_TTL_SECONDS}`,
      ]),
    );
    expect(attributes).not.toContain('Secure');
    expect(t.config.PUBLIC_URL).toMatch(/^http:/);
  });

  it('is Secure, as the CSRF cookie, with the __Host- prefix when PUBLIC_URL is https', async () => {
    const https = await createTestApp({ env: { PUBLIC_URL: 'https://idp.example' } });
    try {
      await createUser(
        https.database.db,
        { config: https.config, clock: https.clock },
        {
          username: 'alice',
          password: 'correct horse battery',
        },
      );
      const page = await https.app.inject({ method: 'GET', url: '/signin' });
      expect(setCookie(page, 'idp_csrf')).toBeUndefined();
      const csrf = (setCookie(page, '__Host-idp_csrf') as string).split('; ');
      expect(csrf).toEqual(expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Lax', 'Path=/']));
      expect(csrf.some((attribute) => /^Domain=/i.test(attribute))).toBe(false);
      const { res, session } = await signIn(https.app, undefined, '__Host-');
      expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
      for (const name of ['__Host-idp_session', '__Host-idp_device']) {
        const attributes = (setCookie(res, name) as string).split('; ');
        expect(attributes).toEqual(expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Lax', 'Path=/']));
        expect(attributes.some((attribute) => /^Domain=/i.test(attribute))).toBe(false);
      }
      // The unprefixed name is not read: a cookie planted under it signs nobody in.
      const planted = await https.app.inject({
        method: 'GET',
        url: '/account',
        cookies: { idp_session: session },
      });
      expect(planted.statusCode).toBe(302);
    } finally {
      await https.close();
    }
  });

  it('holds 256 random bits, of which the database keeps only the SHA-256 hash', async () => {
    const { session } = await signIn(t.app);
    expect(Buffer.from(session, 'base64url')).toHaveLength(32);
    const rows = await sessionRows();
    const row = rows.find((candidate) => candidate.id_hash === hashSecret(session));
    expect(row).toMatchObject({
      user_id: aliceId,
      auth_time: t.clock.now(),
      created_at: t.clock.now(),
      expires_at: new Date(t.clock.now().getTime() + t.config.SESSION_TTL_SECONDS * 1000),
    });
    expect(JSON.stringify(rows)).not.toContain(session);
    // The stored hash is no key: presented as a cookie it signs nobody in.
    expect((await probe(row?.id_hash)).session).toBeNull();
  });
});

describe('loadSession', () => {
  it('finds the signed-in user, once per request', async () => {
    const { session } = await signIn(t.app);
    expect(await probe(session)).toEqual({
      memoized: true,
      session: {
        idHash: hashSecret(session),
        sid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        userId: aliceId,
        authTime: t.clock.now().toISOString(),
        amr: ['pwd'],
        reauthenticatedAt: null,
      },
    });
  });

  it.each([
    ['no cookie', undefined],
    ['an empty cookie', ''],
    ['a malformed cookie', 'not a session id'],
    ['an unknown session id', 'A'.repeat(43)],
  ])('is null with %s', async (_why, cookie) => {
    expect((await probe(cookie)).session).toBeNull();
  });

  it('refuses an expired session', async () => {
    const { session } = await signIn(t.app);
    t.clock.advance(t.config.SESSION_TTL_SECONDS * 1000 - 1000);
    expect((await probe(session)).session).not.toBeNull();
    t.clock.advance(1000);
    expect((await probe(session)).session).toBeNull();
    const account = await t.app.inject({ method: 'GET', url: '/account', cookies: { idp_session: session } });
    expect(account.statusCode).toBe(302);
    expect(account.headers.location).toBe('/signin?return_to=/account');
  });

  it('refuses the session of a user who was disabled since', async () => {
    const { session } = await signIn(t.app);
    expect((await probe(session)).session).not.toBeNull();
    await t.database.db
      .updateTable('users')
      .set({ disabled_at: t.clock.now() })
      .where('id', '=', aliceId)
      .execute();
    try {
      expect((await probe(session)).session).toBeNull();
    } finally {
      await t.database.db.updateTable('users').set({ disabled_at: null }).where('id', '=', aliceId).execute();
    }
    // The row was kept: enabling the user again brings it back (disableUser deletes them for good).
    expect((await probe(session)).session).not.toBeNull();
  });
});

describe('sign-in and sign-out', () => {
  it('rotates the session id at sign-in: the old cookie stops working', async () => {
    const first = await signIn(t.app);
    const second = await signIn(t.app, first.session);
    expect(second.session).not.toBe(first.session);
    expect((await probe(first.session)).session).toBeNull();
    expect((await probe(second.session)).session).toMatchObject({ userId: aliceId });
    const hashes = (await sessionRows()).map((row) => row.id_hash);
    expect(hashes).not.toContain(hashSecret(first.session));
    expect(hashes).toContain(hashSecret(second.session));
  });

  it('removes the expired sessions of the user at sign-in', async () => {
    const old = await signIn(t.app);
    t.clock.advance(t.config.SESSION_TTL_SECONDS * 1000 + 1);
    await signIn(t.app);
    expect((await sessionRows()).map((row) => row.id_hash)).not.toContain(hashSecret(old.session));
  });

  it('ends the session server-side at sign-out and clears the cookie', async () => {
    const { session, csrfCookie } = await signIn(t.app);
    const other = await signIn(t.app);
    const res = await t.app.inject({
      method: 'POST',
      url: '/signout',
      cookies: { idp_session: session, idp_csrf: csrfCookie },
      payload: { csrf_token: await signedInToken(session, csrfCookie) },
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/signin');
    const cleared = setCookie(res, 'idp_session') as string;
    expect(cleared).toMatch(/^idp_session=;/);
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970 00:00:00 GMT/);
    // The old cookie, replayed, no longer loads a session; another browser's session is untouched.
    expect((await probe(session)).session).toBeNull();
    expect((await sessionRows()).map((row) => row.id_hash)).not.toContain(hashSecret(session));
    expect((await probe(other.session)).session).not.toBeNull();
  });
});

describe('CSRF tokens', () => {
  it('are bound to the session: a cookie and token from an anonymous browser, planted, sign nobody out', async () => {
    const victim = await signIn(t.app);
    const attacker = await t.app.inject({ method: 'GET', url: '/signin' });
    const plantedCookie = cookieValue(attacker, 'idp_csrf') as string;
    const plantedToken = /name="csrf_token" value="([^"]+)"/.exec(attacker.body)?.[1] as string;
    const res = await t.app.inject({
      method: 'POST',
      url: '/signout',
      cookies: { idp_session: victim.session, idp_csrf: plantedCookie },
      payload: { csrf_token: plantedToken },
    });
    expect(res.statusCode).toBe(403);
    expect((await probe(victim.session)).session).not.toBeNull();
    // Nor does a token of another signed-in browser.
    const other = await signIn(t.app);
    const othersToken = await signedInToken(other.session, other.csrfCookie);
    const crossed = await t.app.inject({
      method: 'POST',
      url: '/signout',
      cookies: { idp_session: victim.session, idp_csrf: other.csrfCookie },
      payload: { csrf_token: othersToken },
    });
    expect(crossed.statusCode).toBe(403);
    expect((await probe(victim.session)).session).not.toBeNull();
  });

  it('binds a token to the browser cookie: HttpOnly, SameSite=Lax, Path=/, the session lifetime', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/test/csrf' });
    const { token, again } = res.json() as { token: string; again: string };
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(again).toBe(token);
    const cookie = setCookie(res, 'idp_csrf') as string;
    expect(cookie.split('; ').slice(1)).toEqual(
      expect.arrayContaining([
        'HttpOnly',
        'SameSite=Lax',
        'Path=/',
        `Max-Age=${t.config.SESSION_TTL_SECONDS}`,
      ]),
    );
    const value = cookieValue(res, 'idp_csrf') as string;
    expect(Buffer.from(value, 'base64url')).toHaveLength(32);
    expect(token).not.toBe(value);

    const check = async (cookies: Record<string, string>, submitted: unknown) =>
      (
        (
          await t.app.inject({ method: 'POST', url: '/test/csrf', cookies, payload: { token: submitted } })
        ).json() as { valid: boolean }
      ).valid;
    expect(await check({ idp_csrf: value }, token)).toBe(true);
    expect(await check({}, token)).toBe(false);
    expect(await check({ idp_csrf: 'B'.repeat(43) }, token)).toBe(false);
    expect(await check({ idp_csrf: value }, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).toBe(
      false,
    );
    expect(await check({ idp_csrf: value }, value)).toBe(false);
    expect(await check({ idp_csrf: value }, '')).toBe(false);
    expect(await check({ idp_csrf: value }, [token])).toBe(false);

    // A browser that has a CSRF cookie keeps it: its open forms stay valid.
    const later = await t.app.inject({ method: 'GET', url: '/test/csrf', cookies: { idp_csrf: value } });
    expect((later.json() as { token: string }).token).toBe(token);
    expect(cookieValue(later, 'idp_csrf')).toBe(value);
  });

  it('accepts forms of a former secret listed in COOKIE_SECRET_PREVIOUS, and signs with the new one', async () => {
    const OLD = 'the-former-secret-of-at-least-32-characters';
    const NEW = 'the-current-secret-of-at-least-32-characters';
    // Three instances on this file's database (alice is there): before, during and after a rotation.
    const instance = (env: Record<string, string>) =>
      buildApp({ config: testConfig(env), db: t.database.db, clock: t.clock });
    const before = await instance({ COOKIE_SECRET: OLD });
    const during = await instance({
      COOKIE_SECRET: NEW,
      COOKIE_SECRET_PREVIOUS: ` x${'y'.repeat(31)} , ${OLD}`,
    });
    const after = await instance({ COOKIE_SECRET: NEW });
    try {
      // A form issued before the rotation, submitted after it.
      const page = await before.inject({ method: 'GET', url: '/signin' });
      const csrfCookie = cookieValue(page, 'idp_csrf') as string;
      const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] as string;
      const submit = (app: typeof before) =>
        app.inject({
          method: 'POST',
          url: '/signin',
          cookies: { idp_csrf: csrfCookie },
          payload: { csrf_token: csrfToken, username: 'alice', password: 'correct horse battery' },
        });
      expect((await submit(during)).statusCode).toBe(303);
      expect((await submit(after)).statusCode).toBe(403);
      // New forms are signed with the new secret: the instance after the rotation takes them.
      const token = async (app: typeof before) => {
        const res = await app.inject({ method: 'GET', url: '/signin', cookies: { idp_csrf: csrfCookie } });
        return /name="csrf_token" value="([^"]+)"/.exec(res.body)?.[1];
      };
      const fresh = await token(during);
      expect(fresh).not.toBe(csrfToken);
      expect(await token(after)).toBe(fresh);
    } finally {
      await Promise.all([before.close(), during.close(), after.close()]);
    }
  });

  it('signs with COOKIE_SECRET: another secret gives other tokens for the same cookie', async () => {
    const other = await createTestApp({
      env: { COOKIE_SECRET: 'another-secret-of-at-least-32-characters!' },
    });
    try {
      const value = 'C'.repeat(43);
      const here = await t.app.inject({ method: 'GET', url: '/signin', cookies: { idp_csrf: value } });
      const there = await other.app.inject({ method: 'GET', url: '/signin', cookies: { idp_csrf: value } });
      const token = (res: LightMyRequestResponse) => /name="csrf_token" value="([^"]+)"/.exec(res.body)?.[1];
      expect(token(here)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(token(there)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(token(here)).not.toBe(token(there));
    } finally {
      await other.close();
    }
  });
});
