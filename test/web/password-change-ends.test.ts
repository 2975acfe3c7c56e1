import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUserByUsername } from '../../src/modules/accounts/accounts.repository.js';
import {
  type EmailChangeResult,
  requestEmailChange,
} from '../../src/modules/accounts/email-change.service.js';
import { verifyEmail } from '../../src/modules/accounts/email-verification.service.js';
import { totpCodeAt } from '../../src/modules/mfa/totp-code.js';
import { listConsentsOfUser, saveConsent } from '../../src/modules/oauth/consents.repository.js';
import { insertPasskey } from '../../src/modules/passkeys/passkeys.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, forms, hiddenFields, hiddenFieldsOf, inputs } from '../helpers/browser.js';
import { usingPostgres } from '../helpers/database.js';
import {
  depsOf,
  makeClient,
  makeOfficialApp,
  makeUser,
  mintCode,
  type TestClient,
  type TestUser,
} from '../helpers/factories.js';
import { exchangeCode } from '../helpers/http.js';
import { makeTotpUser, TOTP_STEP_MS } from '../helpers/totp.js';

/*
 * What a password change ends (issue 33, item 5): the session's id is renewed (same `sid`), the
 * mobile app's devices and every app's access end unless their boxes are unticked, pending reset
 * links die (at a change of address too), and the confirmation lists the passkeys with a remove
 * button each; the reset's confirmation lists them as well.
 */

const PUBLIC_URL = 'https://id.example.test';
const NEW_PASSWORD = 'a brand new passphrase';
const COOKIE = '__Host-idp_session';
let t: TestApp;
let officialApp: TestClient;
let site: TestClient;

beforeAll(async () => {
  t = await createTestApp({ env: { PUBLIC_URL } });
  officialApp = await makeOfficialApp(t);
  site = await makeClient(t, { name: 'Site' });
});

afterAll(async () => {
  await t?.close();
});

async function signedIn(who: TestUser): Promise<Browser> {
  const browser = new Browser(t.app);
  await browser.signIn(who);
  return browser;
}

/** A mobile route that takes a fresh challenge signed by `key`. */
async function mobile(url: string, key: KeyObject, deviceId: string, body: Record<string, string>) {
  const post = (path: string, payload: unknown) =>
    t.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
  const base = { client_id: officialApp.clientId, device_id: deviceId };
  const { challenge } = (await post('/api/v1/mobile/challenge', base)).json() as { challenge: string };
  const signature = sign(null, Buffer.from(`${challenge}.${deviceId}`), key).toString('base64url');
  return post(url, { ...base, challenge, signature, ...body });
}

/** A phone of the official app signs `who` in; answers whether it can still refresh. */
async function signInPhone(who: TestUser): Promise<() => Promise<number>> {
  const keys = generateKeyPairSync('ed25519');
  const deviceId = `device-${Math.random().toString(36).slice(2, 12)}`;
  const res = await mobile('/api/v1/mobile/verify', keys.privateKey, deviceId, {
    public_key: keys.publicKey.export({ format: 'jwk' }).x as string,
    username: who.username,
    password: who.password,
  });
  expect(res.statusCode, res.body).toBe(200);
  let refreshToken = (res.json() as { refresh_token: string }).refresh_token;
  return async () => {
    const refreshed = await mobile('/api/v1/mobile/refresh', keys.privateKey, deviceId, {
      refresh_token: refreshToken,
    });
    if (refreshed.statusCode === 200)
      refreshToken = (refreshed.json() as { refresh_token: string }).refresh_token;
    return refreshed.statusCode;
  };
}

/** The site, allowed by `who`, with an access token of its own. */
async function siteToken(who: TestUser): Promise<string> {
  const client = await t.database.db
    .selectFrom('clients')
    .select('id')
    .where('client_id', '=', site.clientId)
    .executeTakeFirstOrThrow();
  await saveConsent(t.database.db, {
    userId: who.id,
    clientPk: client.id,
    scopes: ['openid'],
    at: t.clock.now(),
  });
  const res = await exchangeCode(t.app, site, await mintCode(t, site, who));
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { access_token: string }).access_token;
}

const userinfo = async (token: string) =>
  (
    await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${token}` },
    })
  ).statusCode;

const sessionsOf = (userId: number) =>
  t.database.db
    .selectFrom('browser_sessions')
    .select(['sid', 'id_hash'])
    .where('user_id', '=', userId)
    .execute();

/** Submits the password form as the page has it, its boxes as given (a ticked box sends "1"). */
async function changePassword(browser: Browser, who: TestUser, boxes: string[]) {
  const page = await browser.get('/account/password');
  expect(page.statusCode).toBe(200);
  const form = forms(page.body).find((each) => each.action === '/account/password')?.html ?? '';
  const ticked = inputs(form).filter((input) => input.type === 'checkbox' && boxes.includes(input.name));
  return browser.post('/account/password', {
    ...hiddenFieldsOf(form),
    ...Object.fromEntries(ticked.map((input) => [input.name, input.value ?? 'on'])),
    current_password: who.password,
    new_password: NEW_PASSWORD,
    password_confirm: NEW_PASSWORD,
  });
}

/** The newest reset link queued for `address`, read from the outbox. */
async function resetLinkTo(address: string): Promise<string> {
  const row = await t.database.db
    .selectFrom('mail_outbox')
    .select('text_body')
    .where('recipient', '=', address)
    .where('kind', '=', 'password_reset')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  return (/https:\/\/\S+/.exec(row.text_body)?.[0] ?? '').slice(PUBLIC_URL.length);
}

async function askForReset(login: string): Promise<void> {
  const res = await new Browser(t.app).submit('/password/forgot', '/password/forgot', { login });
  expect(res.statusCode).toBe(200);
  await t.app.afterResponse.idle();
}

async function addPasskey(userId: number, name: string): Promise<number> {
  const passkey = await insertPasskey(t.database.db, {
    userId,
    credentialId: `cred-${name}-${userId}`,
    publicKey: 'pQECAyYgASFYIA',
    counter: 0,
    transports: ['internal'],
    aaguid: '00000000-0000-0000-0000-000000000000',
    backupEligible: false,
    backedUp: false,
    name,
    createdAt: t.clock.now(),
  });
  return passkey?.id ?? 0;
}

describe(`what a password change ends, on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('renews the session id (the old cookie signs nobody in, the sid stays), and by default signs out the phones and ends app access', async () => {
    const user = await makeUser(t);
    const here = await signedIn(user);
    const phone = await signInPhone(user);
    const token = await siteToken(user);
    const [before] = await sessionsOf(user.id);
    const oldCookie = here.cookies.get(COOKIE) ?? '';
    expect(oldCookie).not.toBe('');

    // The page ticks both boxes.
    const page = await here.get('/account/password');
    expect(page.body).toMatch(
      /<input type="checkbox" id="sign_out_devices" name="sign_out_devices" value="1" checked/,
    );
    expect(page.body).toMatch(/<input type="checkbox" id="revoke_apps" name="revoke_apps" value="1" checked/);

    const res = await changePassword(here, user, ['sign_out_devices', 'revoke_apps']);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account/password/changed?devices=1&apps=1');

    // A new cookie value for the same session.
    const newCookie = here.cookies.get(COOKIE) ?? '';
    expect(newCookie).not.toBe(oldCookie);
    const after = await sessionsOf(user.id);
    expect(after).toHaveLength(1);
    expect(after[0]?.sid).toBe(before?.sid);
    expect(after[0]?.id_hash).not.toBe(before?.id_hash);
    expect((await here.get('/account')).statusCode).toBe(200);
    const copy = new Browser(t.app);
    copy.cookies.set(COOKIE, oldCookie);
    const refused = await copy.get('/account');
    expect(refused.statusCode).toBe(302);
    expect(refused.headers.location).toBe('/signin?return_to=/account');

    // The phone and the site are out; the consent is forgotten.
    expect(await phone()).toBe(400);
    expect(await userinfo(token)).toBe(401);
    expect(await listConsentsOfUser(t.database.db, user.id)).toEqual([]);

    const done = await here.get(res.headers.location as string);
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Every device of the mobile app is signed out.');
    expect(done.body).toContain('Every app’s access is ended');
  });

  it('keeps the phones and the apps when the boxes are unticked', async () => {
    const user = await makeUser(t);
    const here = await signedIn(user);
    const phone = await signInPhone(user);
    const token = await siteToken(user);
    const res = await changePassword(here, user, []);
    expect(res.statusCode).toBe(303);
    expect(await phone()).toBe(200);
    expect(await userinfo(token)).toBe(200);
    expect(await listConsentsOfUser(t.database.db, user.id)).toHaveLength(1);
  });

  it('lists the passkeys with a remove button each, whose form works with the new session', async () => {
    const user = await makeUser(t, { bare: true });
    const here = await signedIn(user);
    // Signed in long ago: the password just entered is the fresh proof the removal needs.
    t.clock.advance((t.config.REAUTH_MAX_AGE_SECONDS + 60) * 1000);
    const first = await addPasskey(user.id, 'Laptop');
    await addPasskey(user.id, 'Unknown key');
    const res = await changePassword(here, user, ['sign_out_devices', 'revoke_apps']);
    const done = await here.get(res.headers.location as string);
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Laptop');
    expect(done.body).toContain('Unknown key');
    const removals = forms(done.body).filter((each) => each.action === '/account/passkeys/remove');
    expect(removals).toHaveLength(2);
    const laptop = removals.find((each) => hiddenFieldsOf(each.html).passkey === String(first));
    expect(laptop?.html).toContain('Remove the passkey Laptop');
    const removed = await here.post('/account/passkeys/remove', hiddenFieldsOf(laptop?.html ?? ''));
    expect(removed.statusCode).toBe(303);
    const left = await t.database.db
      .selectFrom('passkeys')
      .select('name')
      .where('user_id', '=', user.id)
      .execute();
    expect(left).toEqual([{ name: 'Unknown key' }]);
  });

  it('ends the reset links mailed before the change', async () => {
    const user = await makeUser(t);
    await askForReset(user.username);
    const link = await resetLinkTo(`${user.username}@example.com`);
    expect((await new Browser(t.app).get(link)).statusCode).toBe(200);
    const here = await signedIn(user);
    expect((await changePassword(here, user, [])).statusCode).toBe(303);
    const page = await new Browser(t.app).get(link);
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('This password reset link does not work');
  });

  it('ends the reset links mailed to the old address when the account moves to a new one', async () => {
    const user = await makeUser(t);
    const oldAddress = `${user.username}@example.com`;
    await askForReset(user.username);
    const link = await resetLinkTo(oldAddress);
    const { db, ctx } = depsOf(t);
    const account = await findUserByUsername(db, user.username);
    const asked: EmailChangeResult = await requestEmailChange(db, ctx, {
      user: { id: user.id, username: user.username, email: account?.email ?? null },
      newEmail: 'moved@example.org',
      currentPassword: user.password,
      locale: 'en',
      ip: null,
    });
    expect(asked.ok).toBe(true);
    const change = await db
      .selectFrom('mail_outbox')
      .select('text_body')
      .where('recipient', '=', 'moved@example.org')
      .executeTakeFirstOrThrow();
    const token = /token=(ev_[A-Za-z0-9_-]+)/.exec(change.text_body)?.[1] ?? '';
    expect(await verifyEmail(db, ctx, { token, ip: '203.0.113.9', locale: 'en' })).toMatchObject({
      email: 'moved@example.org',
    });
    const page = await new Browser(t.app).get(link);
    expect(page.statusCode).toBe(400);
    const form = await new Browser(t.app).post('/password/reset', {
      token: new URL(link, PUBLIC_URL).searchParams.get('token') ?? '',
    });
    expect(form.statusCode).toBe(403); // no CSRF token: refused before anything, and the link is dead anyway
    const ended = await db
      .selectFrom('password_resets')
      .select(['expires_at', 'used_at'])
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(ended.used_at).toBeNull();
    expect(new Date(ended.expires_at).getTime()).toBeLessThanOrEqual(t.clock.now().getTime());
  });

  it('ends the password steps begun with the old password, in a browser and in the app, at a change and at a reset', async () => {
    for (const end of ['change', 'reset'] as const) {
      const { user, key } = await makeTotpUser(t);
      const code = () => totpCodeAt(key, t.clock.now());
      // Someone who has the old password: a browser and a phone each wait at the second step.
      const browser = new Browser(t.app);
      expect((await browser.signIn(user)).headers.location).toBe('/signin/second-factor');
      const opened = await browser.get('/signin/second-factor');
      expect(opened.statusCode).toBe(200);
      const stepForm = hiddenFields(opened.body, '/signin/second-factor');
      const keys = generateKeyPairSync('ed25519');
      const deviceId = `pending-${end}-${user.id}`;
      const verify = await mobile('/api/v1/mobile/verify', keys.privateKey, deviceId, {
        public_key: keys.publicKey.export({ format: 'jwk' }).x as string,
        username: user.username,
        password: user.password,
      });
      expect(verify.statusCode, verify.body).toBe(403);
      const { mfa_token } = verify.json() as { mfa_token: string };

      if (end === 'change') {
        const owner = new Browser(t.app);
        await owner.signIn(user);
        expect(
          (await owner.submit('/signin/second-factor', '/signin/second-factor', { code: code() })).statusCode,
        ).toBe(303);
        t.clock.advance(TOTP_STEP_MS);
        expect((await changePassword(owner, user, [])).statusCode).toBe(303);
      } else {
        await askForReset(user.username);
        const resetter = new Browser(t.app);
        const page = await resetter.get(await resetLinkTo(`${user.username}@example.com`));
        const form = forms(page.body).find((each) => each.action === '/password/reset')?.html ?? '';
        const done = await resetter.post('/password/reset', {
          ...hiddenFieldsOf(form),
          password: NEW_PASSWORD,
          password_confirm: NEW_PASSWORD,
        });
        expect(done.statusCode).toBe(200);
      }
      t.clock.advance(TOTP_STEP_MS);

      // A right code no longer finishes either: the browser starts over, the app is refused.
      const step = await browser.post('/signin/second-factor', { ...stepForm, code: code() });
      expect(step.headers.location).toBe('/signin?expired=1');
      expect((await browser.get('/signin/second-factor')).headers.location).toBe('/signin?expired=1');
      t.clock.advance(TOTP_STEP_MS);
      const second = await mobile('/api/v1/mobile/verify/second-factor', keys.privateKey, deviceId, {
        mfa_token,
        code: code(),
      });
      expect(second.statusCode).toBe(400);
      expect(second.json()).toMatchObject({ error: 'invalid_grant' });
    }
  });

  it('lists the passkeys on the reset confirmation, with the way to remove them once signed in', async () => {
    const user = await makeUser(t);
    await addPasskey(user.id, 'Old phone');
    await askForReset(user.username);
    const browser = new Browser(t.app);
    const link = await resetLinkTo(`${user.username}@example.com`);
    const page = await browser.get(link);
    const form = forms(page.body).find((each) => each.action === '/password/reset')?.html ?? '';
    const done = await browser.post('/password/reset', {
      ...hiddenFieldsOf(form),
      password: NEW_PASSWORD,
      password_confirm: NEW_PASSWORD,
    });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Your password is changed');
    expect(done.body).toContain('Old phone');
    expect(done.body).toContain('href="/signin?return_to=/account/security%23passkeys"');
  });
});
