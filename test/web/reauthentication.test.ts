import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../src/modules/mfa/totp-code.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, hiddenFields } from '../helpers/browser.js';
import { makeUser, type TestUser } from '../helpers/factories.js';
import { SoftAuthenticator } from '../modules/passkeys/soft-authenticator.js';

/**
 * Sudo mode: the pages that change how an account signs in (TOTP, recovery codes, passkeys), its
 * e-mail address, the export and the deletion need a sign-in or a re-authentication within
 * REAUTH_MAX_AGE_SECONDS. A session cookie alone, older than that, is sent to
 * /account/reauthenticate and changes nothing; after the password or a code there, each works,
 * and the confirmed address is told of each change.
 */
let t: TestApp;
const WINDOW_S = 300;
const site = { origin: 'http://localhost:3000', rpId: 'localhost' };
beforeAll(async () => {
  t = await createTestApp({ env: { REAUTH_MAX_AGE_SECONDS: String(WINDOW_S), SIGN_IN_MAX_ATTEMPTS: '5' } });
});
afterAll(() => t.close());

const SECURITY = '/account/security';
const REAUTH = '/account/reauthenticate';

/** Past the window: what a copied cookie looks like some minutes after its owner signed in. */
const age = () => t.clock.advance((WINDOW_S + 1) * 1000);

function keyShown(html: string): string {
  return (/<code class="totp-key">([A-Z2-7 ]+)<\/code>/.exec(html)?.[1] ?? '').replaceAll(' ', '');
}

/** Where a guarded request was sent: the re-authentication page, with the way back. */
function expectSentToReauth(res: LightMyRequestResponse, status: number, back: string): void {
  expect(res.statusCode).toBe(status);
  const location = new URL(String(res.headers.location), 'http://x');
  expect(location.pathname).toBe(REAUTH);
  expect(location.searchParams.get('return_to')).toBe(back);
}

async function mailKinds(user: TestUser): Promise<string[]> {
  const rows = await t.database.db
    .selectFrom('mail_outbox')
    .where('user_id', '=', user.id)
    .select(['kind', 'recipient'])
    .execute();
  for (const row of rows) expect(row.recipient).toBe(`${user.username}@example.com`);
  return rows.map((row) => row.kind).sort();
}

/** A CSRF token of this browser, from a page that has one (the re-authentication page is never guarded). */
async function csrfOf(browser: Browser): Promise<string> {
  const page = await browser.get(REAUTH);
  expect(page.statusCode).toBe(200);
  return hiddenFields(page.body, REAUTH).csrf_token as string;
}

async function reauthenticate(browser: Browser, fields: Record<string, string>, back = SECURITY) {
  return browser.submit(`${REAUTH}?return_to=${encodeURIComponent(back)}`, REAUTH, fields);
}

async function postJson(browser: Browser, url: string, body: unknown): Promise<LightMyRequestResponse> {
  const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', cookie },
    payload: JSON.stringify(body),
  });
}

async function signedIn(): Promise<{ user: TestUser; browser: Browser }> {
  const user = await makeUser(t);
  const browser = new Browser(t.app);
  await browser.signIn(user);
  return { user, browser };
}

/** TOTP on, through the page while the sign-in is fresh; the key. */
async function enrol(browser: Browser): Promise<string> {
  await browser.submit(SECURITY, `${SECURITY}/totp`, {});
  const page = await browser.get(SECURITY);
  const key = keyShown(page.body);
  const confirmed = await browser.post(`${SECURITY}/totp/confirm`, {
    ...hiddenFields(page.body, `${SECURITY}/totp/confirm`),
    code: totpCodeAt(key, t.clock.now()),
  });
  expect(confirmed.statusCode).toBe(200);
  t.clock.advance(30_000);
  return key;
}

const totpRow = (user: TestUser) =>
  t.database.db.selectFrom('totp_credentials').selectAll().where('user_id', '=', user.id).executeTakeFirst();

describe('a session older than the window (a copied cookie alone)', () => {
  it('GETs of the guarded pages lead to /account/reauthenticate and back', async () => {
    const { browser } = await signedIn();
    age();
    for (const page of [
      SECURITY,
      `${SECURITY}?return_to=%2Faccount`,
      '/account/email',
      '/account/export',
      '/account/delete',
    ])
      expectSentToReauth(await browser.get(page), 302, page);
    // The account page itself, and the re-authentication page, stay open.
    expect((await browser.get('/account')).statusCode).toBe(200);
    expect((await browser.get(REAUTH)).statusCode).toBe(200);
  });

  it('cannot start or confirm TOTP, renew recovery codes or turn TOTP off: 303, and nothing changes', async () => {
    const { user, browser } = await signedIn();
    const csrf = await csrfOf(browser);
    age();
    expectSentToReauth(await browser.post(`${SECURITY}/totp`, { csrf_token: csrf }), 303, SECURITY);
    expect(await totpRow(user)).toBeUndefined();

    // An enrolment started while fresh cannot be confirmed once stale.
    await reauthenticate(browser, { password: user.password });
    await browser.post(`${SECURITY}/totp`, { csrf_token: csrf });
    const key = keyShown((await browser.get(SECURITY)).body);
    age();
    const confirm = await browser.post(`${SECURITY}/totp/confirm`, {
      csrf_token: csrf,
      code: totpCodeAt(key, t.clock.now()),
    });
    expectSentToReauth(confirm, 303, SECURITY);
    expect((await totpRow(user))?.confirmed_at).toBeNull();

    await reauthenticate(browser, { password: user.password });
    const confirmed = await browser.post(`${SECURITY}/totp/confirm`, {
      csrf_token: csrf,
      code: totpCodeAt(key, t.clock.now()),
    });
    expect(confirmed.statusCode).toBe(200);
    const codesBefore = await t.database.db
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('user_id', '=', user.id)
      .execute();
    age();
    expectSentToReauth(await browser.post(`${SECURITY}/recovery-codes`, { csrf_token: csrf }), 303, SECURITY);
    const disable = await browser.post(`${SECURITY}/totp/disable`, {
      csrf_token: csrf,
      username: user.username,
      proof: user.password,
    });
    expectSentToReauth(disable, 303, SECURITY);
    expect((await totpRow(user))?.confirmed_at).not.toBeNull();
    const codesAfter = await t.database.db
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('user_id', '=', user.id)
      .execute();
    expect(codesAfter).toEqual(codesBefore);
    expect(await mailKinds(user)).toEqual(['totp_enabled']);
  });

  it('cannot register or remove a passkey', async () => {
    const { user, browser } = await signedIn();
    const authenticator = new SoftAuthenticator(site);
    const csrf = await csrfOf(browser);
    // One passkey, added while the sign-in is fresh.
    const options = await postJson(browser, '/account/passkeys/options', { csrf_token: csrf });
    expect(options.statusCode).toBe(200);
    const ceremony = options.cookies.find((c) => c.name === 'idp_webauthn');
    browser.cookies.set('idp_webauthn', ceremony?.value ?? '');
    const response = authenticator.register(options.json().options);
    const added = await postJson(browser, '/account/passkeys/verify', {
      csrf_token: csrf,
      response,
      name: 'Mine',
    });
    expect(added.statusCode).toBe(200);
    const passkeyId = String(added.json().passkey.id);
    age();
    for (const url of ['/account/passkeys/options', '/account/passkeys/verify']) {
      const refused = await postJson(browser, url, { csrf_token: csrf, response, name: 'Theirs' });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ ok: false, error: 'reauthentication_required' });
    }
    const remove = await browser.post('/account/passkeys/remove', { csrf_token: csrf, passkey: passkeyId });
    expectSentToReauth(remove, 303, SECURITY);
    const passkeys = await t.database.db
      .selectFrom('passkeys')
      .select('name')
      .where('user_id', '=', user.id)
      .execute();
    expect(passkeys).toEqual([{ name: 'Mine' }]);

    // After the password, the removal goes through and the confirmed address is told.
    const back = await reauthenticate(browser, { password: user.password });
    expect(back.headers.location).toBe(SECURITY);
    const removed = await browser.post('/account/passkeys/remove', { csrf_token: csrf, passkey: passkeyId });
    expect(removed.headers.location).toBe(`${SECURITY}?notice=passkey_removed`);
    expect(await mailKinds(user)).toEqual(['passkey_added', 'passkey_removed']);
  });

  it('cannot ask for a new e-mail address, export or delete, even with the password in the form', async () => {
    const { user, browser } = await signedIn();
    const csrf = await csrfOf(browser);
    age();
    const email = await browser.post('/account/email', {
      csrf_token: csrf,
      username: user.username,
      new_email: 'thief@example.net',
      current_password: user.password,
    });
    expectSentToReauth(email, 303, '/account/email');
    const exported = await browser.post('/account/export', { csrf_token: csrf });
    expectSentToReauth(exported, 303, '/account/export');
    expect(exported.headers['content-disposition']).toBeUndefined();
    const deleted = await browser.post('/account/delete', {
      csrf_token: csrf,
      username: user.username,
      password: user.password,
    });
    expectSentToReauth(deleted, 303, '/account/delete');
    const row = await t.database.db
      .selectFrom('users')
      .select(['deleted_at', 'email'])
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ deleted_at: null, email: `${user.username}@example.com` });
    const links = await t.database.db
      .selectFrom('email_verifications')
      .select('email')
      .where('user_id', '=', user.id)
      .execute();
    expect(links).toEqual([]);
    expect(await mailKinds(user)).toEqual([]);
  });
});

describe('/account/reauthenticate', () => {
  it('after the password, each works again; the confirmed address is told of the e-mail change', async () => {
    const { user, browser } = await signedIn();
    age();
    const done = await reauthenticate(browser, { password: user.password }, '/account/email');
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/account/email');
    const asked = await browser.submit('/account/email', '/account/email', {
      new_email: 'new-home@example.net',
      current_password: user.password,
    });
    expect(asked.headers.location).toBe('/account?notice=email_change_sent');
    const told = await t.database.db
      .selectFrom('mail_outbox')
      .select(['kind', 'recipient', 'text_body'])
      .where('user_id', '=', user.id)
      .orderBy('id')
      .execute();
    expect(told.map((m) => [m.kind, m.recipient])).toEqual([
      ['email_change', 'new-home@example.net'],
      ['email_change_requested', `${user.username}@example.com`],
    ]);
    expect(told[1]?.text_body).toContain('n…@example.net');
    expect(told[1]?.text_body).not.toContain('new-home@example.net');

    const exported = await browser.submit('/account/export', '/account/export', {});
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-disposition']).toMatch(/^attachment/);
    const afterExport = await t.database.db
      .selectFrom('mail_outbox')
      .select(['kind', 'recipient'])
      .where('user_id', '=', user.id)
      .where('kind', '=', 'account_exported')
      .execute();
    expect(afterExport).toEqual([{ kind: 'account_exported', recipient: `${user.username}@example.com` }]);
    // The window runs from the proof: past it, the pages ask again.
    age();
    expectSentToReauth(await browser.get('/account/delete'), 302, '/account/delete');
    await reauthenticate(browser, { password: user.password }, '/account/delete');
    const deleted = await browser.submit('/account/delete', '/account/delete', { password: user.password });
    expect(deleted.headers.location).toBe('/account/deleted');
    // The account's messages go with its profile, but for the last one: the deletion's notice.
    const last = await t.database.db
      .selectFrom('mail_outbox')
      .select(['kind', 'recipient', 'text_body'])
      .where('user_id', '=', user.id)
      .execute();
    expect(last.map((m) => [m.kind, m.recipient])).toEqual([
      ['account_deleted', `${user.username}@example.com`],
    ]);
    expect(last[0]?.text_body).toContain(`Hello, ${user.username}!`);
  });

  it('takes a code from the authenticator app, and renewing the recovery codes then tells the owner', async () => {
    const { user, browser } = await signedIn();
    const key = await enrol(browser);
    age();
    const page = await browser.get(`${REAUTH}?return_to=${encodeURIComponent(SECURITY)}`);
    expect(page.body).toContain('name="code"');
    const done = await reauthenticate(browser, { code: totpCodeAt(key, t.clock.now()) });
    expect(done.headers.location).toBe(SECURITY);
    const renewed = await browser.submit(SECURITY, `${SECURITY}/recovery-codes`, {});
    expect(renewed.statusCode).toBe(200);
    expect(await mailKinds(user)).toEqual(['recovery_codes_renewed', 'totp_enabled']);
  });

  it('a wrong password or code changes nothing and counts in the sign-in budget', async () => {
    const { user, browser } = await signedIn();
    age();
    const wrong = await reauthenticate(browser, { password: 'not the password' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('role="alert"');
    const wrongCode = await reauthenticate(browser, { code: '123456' });
    expect(wrongCode.statusCode).toBe(401);
    expectSentToReauth(await browser.get(SECURITY), 302, SECURITY);
    for (let i = 0; i < 3; i++) await reauthenticate(browser, { password: `wrong ${i}` });
    // Five failures: the budget is spent, so the right password is refused here and at sign-in.
    expect((await reauthenticate(browser, { password: user.password })).statusCode).toBe(401);
    expectSentToReauth(await browser.get(SECURITY), 302, SECURITY);
    const signIn = await browser.submit('/signin', '/signin', {
      username: user.username,
      password: user.password,
    });
    expect(signIn.statusCode).not.toBe(303);
  });

  it('sends the person back only to a local path', async () => {
    const { user, browser } = await signedIn();
    for (const evil of ['//evil.example/x', 'https://evil.example/', '/%2F%2Fevil.example']) {
      const res = await reauthenticate(browser, { password: user.password }, evil);
      expect(res.headers.location).toBe('/account');
    }
  });

  it('needs a session and this browser’s CSRF token', async () => {
    expect((await new Browser(t.app).get(REAUTH)).statusCode).toBe(302);
    const { user, browser } = await signedIn();
    const res = await browser.post(REAUTH, { csrf_token: 'forged', password: user.password });
    expect(res.statusCode).toBe(403);
  });

  it('speaks Russian', async () => {
    const { browser } = await signedIn();
    const page = await browser.get(`${REAUTH}?lang=ru`);
    expect(page.body).toContain('Подтвердите, что это вы');
  });
});
