import path from 'node:path';
import ejs from 'ejs';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viewsDir } from '../../src/lib/paths.js';
import { listPasskeys } from '../../src/modules/passkeys/passkeys.repository.js';
import { messages } from '../../src/web/i18n/index.js';
import { passkeySignInData } from '../../src/web/passkeys-section.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, hiddenFields } from '../helpers/browser.js';
import { makeUser, type TestUser } from '../helpers/factories.js';
import { SoftAuthenticator } from '../modules/passkeys/soft-authenticator.js';

/*
 * Passkeys through the pages: the section and its forms, the sign-in page's button
 * and autofill, the JSON endpoints the page script calls, and what they answer to garbage.
 */

let t: TestApp;
const site = { origin: 'http://localhost:3000', rpId: 'localhost' };

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A JSON POST as the page script sends it, with the browser's cookies (kept as a browser keeps them). */
async function postJson(
  browser: Browser,
  url: string,
  body: unknown,
  raw?: string,
): Promise<LightMyRequestResponse> {
  const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  const res = await t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    payload: raw ?? JSON.stringify(body),
  });
  for (const c of res.cookies as Array<{ name: string; value: string; maxAge?: number }>) {
    if (c.maxAge === 0 || c.value === '') browser.cookies.delete(c.name);
    else browser.cookies.set(c.name, c.value);
  }
  return res;
}

function csrfOf(html: string): string {
  const match = /data-passkey-register[^\n]*\n\s*<input type="hidden" name="csrf_token" value="([^"]+)"/.exec(
    html,
  );
  if (!match?.[1]) throw new Error('no passkey section on the page');
  return match[1];
}

async function signedIn(user: TestUser): Promise<Browser> {
  const browser = new Browser(t.app);
  await browser.signIn(user);
  return browser;
}

/** Registers a passkey through the section's endpoints, as public/passkeys.js does. */
async function addPasskey(browser: Browser, authenticator: SoftAuthenticator, name = '') {
  const page = await browser.get('/account/security');
  expect(page.statusCode).toBe(200);
  const csrf = csrfOf(page.body);
  const options = await postJson(browser, '/account/passkeys/options', { csrf_token: csrf });
  expect(options.statusCode).toBe(200);
  const response = authenticator.register(options.json().options);
  return postJson(browser, '/account/passkeys/verify', { csrf_token: csrf, response, name });
}

/** Signs in with a passkey from the sign-in page at `at`, as the button does. */
async function passkeySignIn(browser: Browser, authenticator: SoftAuthenticator, at = '/signin', flow = {}) {
  const page = await browser.get(at);
  const csrf = hiddenFields(page.body, '/signin').csrf_token;
  const options = await postJson(browser, '/signin/passkey/options', { csrf_token: csrf });
  expect(options.statusCode).toBe(200);
  const response = authenticator.authenticate(options.json().options);
  return postJson(browser, '/signin/passkey/verify', { csrf_token: csrf, response, ...flow });
}

describe('the sign-in page', () => {
  it('offers a passkey button and the username field’s autofill, with scripts from our origin only', async () => {
    const page = await new Browser(t.app).get('/signin');
    expect(page.body).toMatch(/<input id="username"[^>]*autocomplete="username webauthn"/);
    expect(page.body).toContain('data-passkey-signin data-autofill');
    expect(page.body).toContain('Sign in with a passkey');
    expect(page.headers['content-security-policy']).toContain("script-src 'self';");
    const scripts = [...page.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1] ?? '');
    const passkeyScripts = scripts.filter((src) => /webauthn-browser|passkeys/.test(src));
    expect(passkeyScripts).toEqual([
      expect.stringMatching(/^\/assets\/webauthn-browser\.js\?v=[\w-]{12}$/),
      expect.stringMatching(/^\/assets\/passkeys\.js\?v=[\w-]{12}$/),
    ]);
    for (const src of passkeyScripts) {
      const res = await t.app.inject({ method: 'GET', url: src });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    const ru = await new Browser(t.app).get('/signin?lang=ru');
    expect(ru.body).toContain('Войти с ключом доступа');
  });

  it('does not load the passkey scripts on pages without passkeys', async () => {
    const page = await new Browser(t.app).get('/signup');
    expect(page.body).not.toContain('passkeys.js');
    expect(page.body).not.toContain('webauthn-browser.js');
  });
});

describe('the second step’s "Use a passkey" (views/second-factor-passkey.ejs)', () => {
  it('renders the button with the flow, the CSRF field and the scripts, in both languages', async () => {
    for (const [locale, text] of [
      ['en', 'Use a passkey'],
      ['ru', 'Использовать ключ доступа'],
    ] as const) {
      const html = await ejs.renderFile(path.join(viewsDir, 'second-factor-passkey.ejs'), {
        t: messages(locale),
        csrfToken: 'token-of-the-page',
        requestId: 'req_1',
        passkeySignIn: passkeySignInData(),
      });
      expect(html).toContain(text);
      expect(html).toContain('data-passkey-signin');
      expect(html).toContain('data-request="req_1"');
      expect(html).toContain('<input type="hidden" name="csrf_token" value="token-of-the-page">');
      expect(html).toMatch(/<script src="\/assets\/passkeys\.js\?v=[\w-]+" defer><\/script>/);
      // No autofill there: the person is past the username.
      expect(html).not.toContain('data-autofill');
    }
  });
});

describe('registering and signing in', () => {
  it('adds a passkey on the section, then signs in with it to where the person was going, as a multi-factor session', async () => {
    const user = await makeUser(t);
    const browser = await signedIn(user);
    const authenticator = new SoftAuthenticator(site);
    const added = await addPasskey(browser, authenticator, 'Work laptop');
    expect(added.statusCode).toBe(200);
    expect(added.json()).toMatchObject({ ok: true, passkey: { name: 'Work laptop' } });
    const section = await browser.get('/account/security');
    expect(section.body).toContain('<h3>Work laptop</h3>');
    expect(section.body).toContain('never');

    const visitor = new Browser(t.app);
    const res = await passkeySignIn(visitor, authenticator, '/signin?return_to=/account/email', {
      return_to: '/account/email',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, redirect: '/account/email' });
    expect((await visitor.get('/account')).statusCode).toBe(200);
    const session = await t.database.db
      .selectFrom('browser_sessions')
      .select('amr')
      .where('user_id', '=', user.id)
      .orderBy('created_at', 'desc')
      .orderBy('id_hash')
      .execute();
    expect(session.map((s) => s.amr)).toContainEqual(['hwk', 'user', 'mfa']);
    // The ceremony cookie is gone once used.
    expect([...visitor.cookies.keys()]).not.toContain('idp_webauthn');
  });

  it('makes a password alone not enough: the second step offers the passkey, and no code field', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    await addPasskey(await signedIn(user), authenticator);

    const visitor = new Browser(t.app);
    const password = await visitor.signIn(user, '/signin?return_to=/account/email');
    expect(password.statusCode).toBe(303);
    expect(password.headers.location).toBe('/signin/second-factor?return_to=%2Faccount%2Femail');
    // The password step granted nothing yet.
    expect((await visitor.get('/account')).statusCode).not.toBe(200);
    const step = await visitor.get(String(password.headers.location));
    expect(step.statusCode).toBe(200);
    expect(step.body).toContain('data-passkey-signin');
    expect(step.body).not.toContain('name="code"');

    const csrf = /name="csrf_token" value="([^"]+)"/.exec(step.body)?.[1];
    const options = await postJson(visitor, '/signin/passkey/options', { csrf_token: csrf });
    const response = authenticator.authenticate(options.json().options);
    const done = await postJson(visitor, '/signin/passkey/verify', {
      csrf_token: csrf,
      response,
      return_to: '/account/email',
    });
    expect(done.json()).toEqual({ ok: true, redirect: '/account/email' });
    expect((await visitor.get('/account')).statusCode).toBe(200);
  });

  it('answers the destination of a pending authorization request', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    await addPasskey(await signedIn(user), authenticator);
    const res = await passkeySignIn(new Browser(t.app), authenticator, '/signin', { request: 'abc_123' });
    expect(res.json()).toEqual({ ok: true, redirect: '/api/v1/oauth/authorize/resume?request=abc_123' });
  });

  it('refuses a passkey without user verification, in JSON, and starts no session', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    await addPasskey(await signedIn(user), authenticator);
    const browser = new Browser(t.app);
    const page = await browser.get('/signin');
    const csrf = hiddenFields(page.body, '/signin').csrf_token;
    const options = await postJson(browser, '/signin/passkey/options', { csrf_token: csrf });
    const response = authenticator.authenticate(options.json().options, { userVerified: false });
    const res = await postJson(browser, '/signin/passkey/verify', { csrf_token: csrf, response });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ ok: false, error: 'passkey_refused' });
    expect(browser.cookies.has('idp_session')).toBe(false);
  });

  it('renames and removes passkeys with the section’s forms, only the user’s own', async () => {
    const user = await makeUser(t);
    const browser = await signedIn(user);
    const added = await addPasskey(browser, new SoftAuthenticator(site));
    const id = String(added.json().passkey.id);
    const renamed = await browser.submit('/account/security', '/account/passkeys/rename', {
      passkey: id,
      name: '  Phone ',
    });
    expect(renamed.statusCode).toBe(303);
    expect(renamed.headers.location).toBe('/account/security?notice=passkey_renamed');
    const page = await browser.get('/account/security?notice=passkey_renamed');
    expect(page.body).toContain('<h3>Phone</h3>');
    expect(page.body).toContain('The passkey was renamed.');

    const other = await signedIn(await makeUser(t));
    await addPasskey(other, new SoftAuthenticator(site));
    const stolen = await other.submit('/account/security', '/account/passkeys/remove', { passkey: id });
    expect(stolen.headers.location).toBe('/account/security?notice=unknown_passkey');

    const blank = await browser.submit('/account/security', '/account/passkeys/rename', {
      passkey: id,
      name: ' ',
    });
    expect(blank.statusCode).toBe(400);
    const removed = await browser.submit('/account/security', '/account/passkeys/remove', { passkey: id });
    expect(removed.headers.location).toBe('/account/security?notice=passkey_removed');
    expect((await browser.get('/account/security')).body).toContain('You have no passkeys yet.');
    // The section's former address leads to it.
    const old = await browser.get('/account/passkeys');
    expect(old.statusCode).toBe(303);
    expect(old.headers.location).toBe('/account/security#passkeys');
  });
});

describe('deleting the account', () => {
  it('deletes its passkeys, which then sign in no one', async () => {
    const user = await makeUser(t);
    const browser = await signedIn(user);
    const authenticator = new SoftAuthenticator(site);
    await addPasskey(browser, authenticator);
    const deleted = await browser.submit('/account/delete', '/account/delete', { password: user.password });
    expect(deleted.statusCode).toBe(303);
    expect(await listPasskeys(t.database.db, user.id)).toEqual([]);
    const res = await passkeySignIn(new Browser(t.app), authenticator);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ ok: false, error: 'passkey_refused' });
  });
});

describe('the JSON endpoints', () => {
  const endpoints = [
    '/account/passkeys/options',
    '/account/passkeys/verify',
    '/signin/passkey/options',
    '/signin/passkey/verify',
  ];

  it('refuse a request without this browser’s CSRF token', async () => {
    const browser = await signedIn(await makeUser(t));
    for (const url of endpoints) {
      const res = await postJson(browser, url, { csrf_token: 'x'.repeat(43), response: undefined });
      expect([400, 403]).toContain(res.statusCode);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json().ok).toBe(false);
    }
    const options = await postJson(browser, '/signin/passkey/options', { csrf_token: 'x'.repeat(43) });
    expect(options.statusCode).toBe(403);
    expect(options.json()).toMatchObject({ ok: false, error: 'form_expired' });
  });

  it('ask a browser without a session to sign in, in JSON', async () => {
    const browser = new Browser(t.app);
    const page = await browser.get('/signin');
    const csrf = hiddenFields(page.body, '/signin').csrf_token;
    const res = await postJson(browser, '/account/passkeys/options', { csrf_token: csrf });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ ok: false, error: 'login_required' });
  });

  it('answer a finish without a ceremony as expired', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    await addPasskey(await signedIn(user), authenticator);
    const browser = new Browser(t.app);
    const page = await browser.get('/signin');
    const csrf = hiddenFields(page.body, '/signin').csrf_token;
    const options = await postJson(browser, '/signin/passkey/options', { csrf_token: csrf });
    const response = authenticator.authenticate(options.json().options);
    browser.cookies.delete('idp_webauthn');
    const res = await postJson(browser, '/signin/passkey/verify', { csrf_token: csrf, response });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: 'ceremony_expired' });
  });

  it('never answer garbage with a 500', async () => {
    const browser = await signedIn(await makeUser(t));
    const page = await browser.get('/account/security');
    const csrf = csrfOf(page.body);
    const b64 = (n: number) => 'A'.repeat(n);
    const shaped = {
      id: b64(20),
      rawId: b64(20),
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64(40),
        attestationObject: b64(40),
        authenticatorData: b64(40),
        signature: b64(40),
        userHandle: b64(4),
      },
    };
    const bodies: Array<{ raw?: string; body?: unknown }> = [
      { raw: '{' },
      { raw: 'null' },
      { raw: '[]' },
      { raw: '"x"' },
      { raw: '' },
      { body: { csrf_token: 5 } },
      { body: { csrf_token: csrf, response: {} } },
      { body: { csrf_token: csrf, response: { ...shaped, id: b64(5000) } } },
      { body: { csrf_token: csrf, response: { ...shaped, type: 'other' } } },
      {
        body: {
          csrf_token: csrf,
          response: { ...shaped, response: { ...shaped.response, clientDataJSON: '!!' } },
        },
      },
      { body: { csrf_token: csrf, response: shaped, name: 'x'.repeat(100) } },
      { body: { csrf_token: csrf, response: shaped, request: '../../x' } },
      { body: { csrf_token: csrf, response: shaped } },
      {
        body: {
          csrf_token: csrf,
          response: {
            ...shaped,
            response: {
              ...shaped.response,
              clientDataJSON: Buffer.from('{"type":"webauthn.get","challenge":1}').toString('base64url'),
            },
          },
        },
      },
    ];
    for (const url of endpoints) {
      for (const { raw, body } of bodies) {
        // A ceremony under way, so that well-shaped garbage reaches the library's checks.
        await postJson(browser, url.replace('verify', 'options'), { csrf_token: csrf });
        const res = await postJson(browser, url, body, raw);
        expect(res.statusCode, `${url} ${raw ?? JSON.stringify(body).slice(0, 80)}`).toBeLessThan(500);
        if (url.endsWith('verify')) expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.json().ok, url).toBe(res.statusCode === 200);
      }
    }
  });
});
