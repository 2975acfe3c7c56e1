import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendPasswordResetByOperator } from '../../src/modules/accounts/password-reset.service.js';
import { totpCodeAt } from '../../src/modules/mfa/totp-code.js';
import { insertPasskey } from '../../src/modules/passkeys/passkeys.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { attribute, Browser, forms, hiddenFields, hiddenFieldsOf, unescapeHtml } from '../helpers/browser.js';
import { depsOf, makeClient, makeUser, type TestClient, type TestUser } from '../helpers/factories.js';
import { authorizeUrl, exchangeCode } from '../helpers/http.js';

/**
 * Two-step sign-in through the pages: enrolment on /account/security with the key
 * the page shows, the second step after the password, recovery codes, and a site's acr_values=mfa.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { SIGN_IN_MAX_ATTEMPTS: '5' } });
});
afterAll(() => t.close());

const STEP_MS = 30_000;
const SECURITY = '/account/security';

/** The key in the enrolment page, as a person would type it into an app (spaces dropped). */
function keyShown(html: string): string {
  const match = /<code class="totp-key">([A-Z2-7 ]+)<\/code>/.exec(html);
  expect(match).not.toBeNull();
  return (match?.[1] ?? '').replaceAll(' ', '');
}

function codesShown(html: string): string[] {
  return [...html.matchAll(/<li><code>([a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4})<\/code><\/li>/g)].map(
    (m) => m[1] as string,
  );
}

const codeNow = (key: string) => totpCodeAt(key, t.clock.now());

/** Where the "I saved them" form of a page showing recovery codes goes: its action and fields, as a browser sends a GET form. */
function savedStep(html: string): string {
  const form = forms(html).find((candidate) => candidate.html.includes('id="codes-saved"'));
  if (!form) throw new Error('no "I saved them" form');
  expect(form.html).toMatch(/<form method="get" /);
  const query = new URLSearchParams(hiddenFieldsOf(form.html)).toString();
  return query ? `${form.action}?${query}` : form.action;
}

/** Turns TOTP on for a signed-in browser through the page; returns the key and the recovery codes. */
async function enrolThroughPage(
  browser: Browser,
  flowQuery = '',
): Promise<{ key: string; codes: string[]; page: LightMyRequestResponse }> {
  const started = await browser.submit(`${SECURITY}${flowQuery}`, `${SECURITY}/totp`, {});
  expect(started.statusCode).toBe(303);
  const enrolPage = await browser.get(String(started.headers.location));
  expect(enrolPage.statusCode).toBe(200);
  expect(enrolPage.body).toMatch(/<svg role="img" aria-label="[^"]+" class="qr"/);
  const key = keyShown(enrolPage.body);
  const confirmed = await browser.post(`${SECURITY}/totp/confirm`, {
    ...hiddenFields(enrolPage.body, `${SECURITY}/totp/confirm`),
    code: codeNow(key),
  });
  expect(confirmed.statusCode).toBe(200);
  const codes = codesShown(confirmed.body);
  expect(codes).toHaveLength(10);
  t.clock.advance(STEP_MS);
  return { key, codes, page: confirmed };
}

async function enrolledUser(): Promise<{ user: TestUser; key: string; codes: string[] }> {
  const user = await makeUser(t);
  const browser = new Browser(t.app);
  await browser.signIn(user);
  const { key, codes } = await enrolThroughPage(browser);
  return { user, key, codes };
}

const sessionCookie = (browser: Browser) => browser.cookies.get('idp_session');

describe('/account/security', () => {
  it('needs a session, and is linked from the account page', async () => {
    const anonymous = await new Browser(t.app).get(SECURITY);
    expect(anonymous.statusCode).toBe(302);
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    expect((await browser.get('/account')).body).toContain('href="/account/security"');
  });

  it('enrols with the key shown, refuses a wrong first code, then never shows the key again', async () => {
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const off = await browser.get(SECURITY);
    expect(off.body).toContain(`action="${SECURITY}/totp"`);
    await browser.submit(SECURITY, `${SECURITY}/totp`, {});
    const enrolPage = await browser.get(SECURITY);
    const key = keyShown(enrolPage.body);
    expect(key).toMatch(/^[A-Z2-7]{32}$/);
    const wrong = await browser.post(`${SECURITY}/totp/confirm`, {
      ...hiddenFields(enrolPage.body, `${SECURITY}/totp/confirm`),
      code: totpCodeAt(key, new Date(t.clock.now().getTime() + 5 * STEP_MS)),
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('role="alert"');
    const confirmed = await browser.post(`${SECURITY}/totp/confirm`, {
      ...hiddenFields(enrolPage.body, `${SECURITY}/totp/confirm`),
      code: codeNow(key),
    });
    expect(confirmed.statusCode).toBe(200);
    expect(codesShown(confirmed.body)).toHaveLength(10);
    const later = await browser.get(SECURITY);
    expect(later.body).not.toContain(`${key.slice(0, 4)} ${key.slice(4, 8)}`);
    expect(later.body).not.toContain('<svg');
    expect(codesShown(later.body)).toEqual([]);
    expect(later.body).toContain('10 unused recovery codes left.');
    // In Russian too.
    expect((await browser.get(`${SECURITY}?lang=ru`)).body).toContain('Двухэтапный вход включён');
  });

  it('the data export says two-step sign-in is on and how many codes are left, and holds no key or code', async () => {
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const { key, codes } = await enrolThroughPage(browser);
    const res = await browser.submit('/account/export', '/account/export', {});
    expect(res.statusCode).toBe(200);
    expect(res.json().second_factors).toMatchObject({ totp: 'on', recovery_codes_unused: 10 });
    expect(res.body).not.toContain(key);
    for (const code of codes) expect(res.body).not.toContain(code);
  });

  it('turns TOTP off with a code from the app', async () => {
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const { key } = await enrolThroughPage(browser);
    const off = await browser.submit(SECURITY, `${SECURITY}/totp/disable`, { proof: codeNow(key) });
    expect(off.statusCode).toBe(303);
    const mail = await t.database.db
      .selectFrom('mail_outbox')
      .where('user_id', '=', user.id)
      .select('kind')
      .execute();
    expect(mail.map((m) => m.kind).sort()).toEqual(['totp_disabled', 'totp_enabled']);
  });

  it('renews the recovery codes and turns TOTP off with the password', async () => {
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const { codes } = await enrolThroughPage(browser);
    const renewed = await browser.submit(SECURITY, `${SECURITY}/recovery-codes`, {});
    const fresh = codesShown(renewed.body);
    expect(fresh).toHaveLength(10);
    expect(fresh).not.toContain(codes[0]);
    const wrong = await browser.submit(SECURITY, `${SECURITY}/totp/disable`, { proof: 'not the password' });
    expect(wrong.statusCode).toBe(400);
    const off = await browser.submit(SECURITY, `${SECURITY}/totp/disable`, { proof: user.password });
    expect(off.statusCode).toBe(303);
    expect((await browser.get(String(off.headers.location))).body).toContain(`action="${SECURITY}/totp"`);
    // A password alone signs in again.
    const again = await new Browser(t.app).signIn(user);
    expect(again.headers.location).toBe('/account');
  });
});

describe('recovery codes, shown once: copy, download, and "I saved them" before going on', () => {
  /** The page's download link: its file name and the text of its data: URL. */
  function downloadOf(html: string): { filename: string; text: string } {
    const tag = /<a class="button" href="data:[^"]*"[^>]*>/.exec(html)?.[0] ?? '';
    const href = attribute(tag, 'href') ?? '';
    expect(href.startsWith('data:text/plain;charset=utf-8,')).toBe(true);
    return {
      filename: attribute(tag, 'download') ?? '',
      text: decodeURIComponent(href.slice(href.indexOf(',') + 1)),
    };
  }

  it('after turning two-step sign-in on: the codes, their file, the copy button, and the saved step alone', async () => {
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const { codes, page } = await enrolThroughPage(browser);
    const html = page.body;
    const file = downloadOf(html);
    expect(file.filename).toBe(`idp-recovery-codes-${user.username}.txt`);
    const lines = file.text.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      `Recovery codes of the account ${user.username} at idp (${new URL(t.config.PUBLIC_URL).host})`,
      `Made on ${new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone: 'UTC' }).format(t.clock.now())}. New codes replace all of these.`,
      'Each code works once, in place of a code from your authenticator app. Keep this file somewhere safe.',
    ]);
    expect(lines.slice(4, 14)).toEqual(codes);
    // The copy button waits for its script (a button that works only with it); the script is the service's own.
    expect(html).toMatch(
      /<button type="button" class="button" data-copy-codes hidden>Copy the codes<\/button>/,
    );
    expect(html).toMatch(/<script src="\/assets\/recovery-codes\.js\?v=[\w-]+" defer><\/script>/);
    expect(html).toContain('data-copied="Copied.');
    // "I saved them": a required box, then on to the security page; nothing else to leave by.
    expect(html).toMatch(
      /<input type="checkbox" id="codes-saved" required aria-describedby="codes-saved-hint">/,
    );
    expect(html).toContain('<label for="codes-saved">I have saved these codes somewhere safe</label>');
    expect(savedStep(html)).toBe(SECURITY);
    expect(html).toContain('>Continue</button>');
    for (const elsewhere of [
      '/account/security/recovery-codes',
      '/account/security/totp/disable',
      'href="/account"',
    ])
      expect(html).not.toContain(elsewhere);
    expect(html).not.toContain('data-passkey-register');
    // Once gone on, the page shows them no more, in any form.
    const after = await browser.get(savedStep(html));
    expect(codesShown(after.body)).toEqual([]);
    expect(after.body).not.toContain('data:text/plain');
    expect(after.body).not.toContain('recovery-codes.js');
  });

  it('after making new codes, in Russian, keeping the flow', async () => {
    const { user, codes } = await enrolledUser();
    const browser = new Browser(t.app);
    browser.cookies.set('lang', 'ru');
    await browser.signIn(user);
    const step = await browser.submit('/signin/second-factor', '/signin/second-factor', {
      code: codes[0] as string,
    });
    expect(step.statusCode).toBe(303);
    const renewed = await browser.submit(
      `${SECURITY}?return_to=/account/email`,
      `${SECURITY}/recovery-codes`,
      {},
    );
    expect(renewed.statusCode).toBe(200);
    const html = renewed.body;
    expect(codesShown(html)).toHaveLength(10);
    const file = downloadOf(html);
    expect(file.text).toContain(`Резервные коды аккаунта ${user.username} в idp`);
    expect(file.text).toContain('Каждый код действует один раз');
    expect(html).toContain('>Скопировать коды</button>');
    expect(html).toContain('>Скачать файлом</a>');
    expect(html).toContain('<label for="codes-saved">Коды сохранены в надёжном месте</label>');
    expect(html).toContain('>Продолжить</button>');
    expect(savedStep(html)).toBe(`${SECURITY}?return_to=%2Faccount%2Femail`);
  });

  it('serves its script from the service, cached a year', async () => {
    const page = await (async () => {
      const user = await makeUser(t);
      const browser = new Browser(t.app);
      await browser.signIn(user);
      return (await enrolThroughPage(browser)).page.body;
    })();
    const src = /<script src="(\/assets\/recovery-codes\.js\?v=[\w-]+)"/.exec(page)?.[1] as string;
    const res = await t.app.inject({ method: 'GET', url: src });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.body).toContain('navigator.clipboard');
  });
});

describe('/signin/second-factor', () => {
  it('a right password alone makes no session; the code then signs in with amr pwd otp mfa', async () => {
    const { user, key } = await enrolledUser();
    const browser = new Browser(t.app);
    const password = await browser.signIn(user);
    expect(password.headers.location).toBe('/signin/second-factor');
    expect(sessionCookie(browser)).toBeUndefined();
    expect((await browser.get('/account')).statusCode).toBe(302);
    const page = await browser.get('/signin/second-factor');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('autocomplete="one-time-code"');
    const wrong = await browser.submit('/signin/second-factor', '/signin/second-factor', { code: '000000' });
    expect(wrong.statusCode).toBe(401);
    expect(sessionCookie(browser)).toBeUndefined();
    const done = await browser.submit('/signin/second-factor', '/signin/second-factor', {
      code: codeNow(key),
    });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/account');
    expect((await browser.get('/account')).statusCode).toBe(200);
    const sessions = await t.database.db
      .selectFrom('browser_sessions')
      .where('user_id', '=', user.id)
      .select('amr')
      .execute();
    expect(sessions.map((s) => s.amr)).toContainEqual(['pwd', 'otp', 'mfa']);
    // The pending sign-in is spent: the page now sends this browser on as a signed-in one.
    const events = await t.database.db
      .selectFrom('audit_events')
      .where('actor', '=', `user:${user.id}`)
      .select('action')
      .execute();
    expect(events.map((e) => e.action)).toEqual(
      expect.arrayContaining(['totp_enabled', 'second_factor_failed', 'second_factor_passed']),
    );
  });

  it('a recovery code signs in once, and the user is told', async () => {
    const { user, codes } = await enrolledUser();
    const first = new Browser(t.app);
    await first.signIn(user);
    const done = await first.submit('/signin/second-factor', '/signin/second-factor', {
      code: codes[0] as string,
    });
    expect(done.statusCode).toBe(303);
    const second = new Browser(t.app);
    await second.signIn(user);
    const refused = await second.submit('/signin/second-factor', '/signin/second-factor', {
      code: codes[0] as string,
    });
    expect(refused.statusCode).toBe(401);
    const mail = await t.database.db
      .selectFrom('mail_outbox')
      .where('user_id', '=', user.id)
      .select('kind')
      .execute();
    expect(mail.map((m) => m.kind)).toContain('recovery_code_used');
  });

  it('after 5 minutes the password step is gone: back to the sign-in page with a message', async () => {
    const { user, key } = await enrolledUser();
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const page = await browser.get('/signin/second-factor');
    t.clock.advance(5 * 60 * 1000 + 1000);
    const late = await browser.post('/signin/second-factor', {
      ...hiddenFields(page.body, '/signin/second-factor'),
      code: codeNow(key),
    });
    expect(late.statusCode).toBe(303);
    expect(late.headers.location).toBe('/signin?expired=1');
    expect(unescapeHtml((await browser.get('/signin?expired=1')).body)).toContain('Signing in took too long');
    expect(sessionCookie(browser)).toBeUndefined();
    // No pending sign-in at all: the same.
    expect((await new Browser(t.app).get('/signin/second-factor')).headers.location).toBe(
      '/signin?expired=1',
    );
  });

  it('20 parallel wrong codes run at most the limit of checks; the right code is then refused', async () => {
    const { user, key } = await enrolledUser();
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const page = await browser.get('/signin/second-factor');
    const fields = hiddenFields(page.body, '/signin/second-factor');
    const wrong = totpCodeAt(key, new Date(t.clock.now().getTime() + 10 * STEP_MS));
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => browser.post('/signin/second-factor', { ...fields, code: wrong })),
    );
    expect(answers.every((res) => res.statusCode === 401)).toBe(true);
    const right = await browser.post('/signin/second-factor', { ...fields, code: codeNow(key) });
    expect(right.statusCode).toBe(401);
    expect(sessionCookie(browser)).toBeUndefined();
    const failed = await t.database.db
      .selectFrom('audit_events')
      .where('actor', '=', `user:${user.id}`)
      .where('action', '=', 'second_factor_failed')
      .select('details')
      .execute();
    expect(failed).toHaveLength(21);
    const checked = failed.filter((event) => (event.details as { locked: boolean }).locked === false);
    // The password took one slot of the 5: at most 4 codes were checked.
    expect(checked.length).toBeLessThanOrEqual(4);
  });

  it('a password reset signs no one in past the second factor', async () => {
    const { user } = await enrolledUser();
    await sendPasswordResetByOperator(t.database.db, depsOf(t).ctx, {
      username: user.username,
      locale: 'en',
    });
    const mail = await t.database.db
      .selectFrom('mail_outbox')
      .where('user_id', '=', user.id)
      .where('kind', '=', 'password_reset')
      .select('text_body')
      .executeTakeFirstOrThrow();
    const link = /https?:\/\/\S+/.exec(mail.text_body)?.[0] ?? '';
    const browser = new Browser(t.app);
    const path = link.slice(t.config.PUBLIC_URL.length);
    const form = await browser.get(path);
    const newPassword = 'a brand new passphrase 42';
    const done = await browser.post('/password/reset', {
      ...hiddenFields(form.body, '/password/reset'),
      password: newPassword,
      password_confirm: newPassword,
    });
    expect(done.statusCode).toBe(200);
    expect(sessionCookie(browser)).toBeUndefined();
    const signIn = await browser.signIn({ username: user.username, password: newPassword });
    expect(signIn.headers.location).toBe('/signin/second-factor');
  });
});

describe('the second step offers "Use a passkey" only to an account that has one', () => {
  /** The second step a browser reaches after the password. */
  async function secondStep(user: TestUser): Promise<string> {
    const browser = new Browser(t.app);
    const password = await browser.signIn(user);
    expect(password.headers.location).toBe('/signin/second-factor');
    const page = await browser.get('/signin/second-factor');
    expect(page.statusCode).toBe(200);
    return page.body;
  }

  it('shows an authenticator app account the code field alone, without the passkey scripts', async () => {
    const { user } = await enrolledUser();
    const page = await secondStep(user);
    expect(page).toContain('name="code"');
    expect(page).not.toContain('data-passkey-signin');
    expect(page).not.toContain('Use a passkey');
    expect(page).not.toMatch(/passkeys\.js|webauthn-browser\.js/);
  });

  it('adds "Use a passkey" once the account has a passkey too', async () => {
    const { user } = await enrolledUser();
    await insertPasskey(t.database.db, {
      userId: user.id,
      credentialId: `credential-of-${user.username}`,
      publicKey: 'A'.repeat(43),
      counter: 0,
      transports: ['internal'],
      aaguid: '00000000-0000-0000-0000-000000000000',
      backupEligible: false,
      backedUp: false,
      name: 'Laptop',
      createdAt: t.clock.now(),
    });
    const page = await secondStep(user);
    expect(page).toContain('name="code"');
    expect(page).toContain('data-passkey-signin');
    expect(page).toContain('Use a passkey');
    expect(page).toMatch(/<script src="\/assets\/passkeys\.js\?v=[\w-]+" defer><\/script>/);
  });
});

describe('a site asking for a second factor (acr_values=mfa)', () => {
  async function idTokenClaims(client: TestClient, res: LightMyRequestResponse) {
    const code = new URL(String(res.headers.location)).searchParams.get('code') as string;
    const idToken = ((await exchangeCode(t.app, client, code)).json() as { id_token: string }).id_token;
    return JSON.parse(Buffer.from(idToken.split('.')[1] as string, 'base64url').toString());
  }

  async function allow(browser: Browser, consent: LightMyRequestResponse) {
    expect(consent.statusCode).toBe(200);
    return browser.post('/api/v1/oauth/authorize/decision', {
      ...hiddenFields(consent.body, '/api/v1/oauth/authorize/decision'),
      decision: 'allow',
    });
  }

  it('an account with TOTP: password, then code, then the site gets amr pwd otp mfa and acr mfa', async () => {
    const { user, key } = await enrolledUser();
    const client = await makeClient(t);
    const browser = new Browser(t.app);
    const start = await browser.get(authorizeUrl(client, { scope: 'openid', acr_values: 'mfa' }));
    const signInPage = String(start.headers.location);
    expect(signInPage).toMatch(/^\/signin\?request=/);
    const password = await browser.signIn(user, signInPage);
    const stepUrl = String(password.headers.location);
    expect(stepUrl).toMatch(/^\/signin\/second-factor\?request=/);
    const done = await browser.submit(stepUrl, '/signin/second-factor', { code: codeNow(key) });
    expect(String(done.headers.location)).toMatch(/^\/api\/v1\/oauth\/authorize\/resume\?request=/);
    const claims = await idTokenClaims(
      client,
      await allow(browser, await browser.get(String(done.headers.location))),
    );
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims.acr).toBe('mfa');
  });

  it('an account without one sets it up, and the request goes on with the upgraded session', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const step = await browser.get(authorizeUrl(client, { scope: 'openid', acr_values: 'mfa' }));
    const stepUrl = String(step.headers.location);
    expect(stepUrl).toMatch(/^\/signin\/second-factor\?request=/);
    const toSecurity = await browser.get(stepUrl);
    expect(toSecurity.statusCode).toBe(303);
    const securityUrl = String(toSecurity.headers.location);
    expect(securityUrl).toMatch(/^\/account\/security\?request=/);
    const explained = await browser.get(securityUrl);
    expect(explained.body).toContain('asks for a second factor');
    const { page } = await enrolThroughPage(browser, securityUrl.slice(SECURITY.length));
    // "I saved them" goes on to the site: a GET form to the request's resume URL.
    const next = savedStep(page.body);
    expect(next).toMatch(/^\/api\/v1\/oauth\/authorize\/resume\?request=/);
    expect(page.body).toContain('>Continue to the site</button>');
    const claims = await idTokenClaims(client, await allow(browser, await browser.get(next)));
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims.acr).toBe('mfa');
  });
});
