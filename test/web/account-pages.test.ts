import argon2 from 'argon2';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { commonPasswords } from '../../src/lib/common-passwords.js';
import { findCredentials, findUserByUsername } from '../../src/modules/accounts/accounts.repository.js';
import { createUser } from '../../src/modules/accounts/accounts.service.js';
import { saveConsent } from '../../src/modules/oauth/consents.repository.js';
import { SCOPES } from '../../src/modules/oauth/scopes.js';
import { renderPage } from '../../src/web/pages.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  attribute,
  Browser,
  forms,
  formWithAction,
  hiddenFields,
  hiddenFieldsOf,
  inputs,
  unescapeHtml,
} from '../helpers/browser.js';

let t: TestApp;
/** An app alice allowed, that the CSRF tests try to make her revoke. */
let alicesApp: { id: number; client_id: string };
beforeAll(async () => {
  t = await createTestApp();
  // The consent page is rendered by the OAuth module; this probe renders it with a given data set.
  t.app.post(
    '/test/consent',
    { config: { auth: 'browser', description: 'test probe', rateLimit: 'signin' } },
    async (request, reply) => renderPage(reply, 'consent', request.body as Record<string, unknown>),
  );
  const alice = await createUser(
    t.database.db,
    { config: t.config, clock: t.clock },
    {
      username: 'alice',
      password: 'correct horse battery',
    },
  );
  alicesApp = await insertClient('Alice’s app');
  await saveConsent(t.database.db, {
    userId: alice.id,
    clientPk: alicesApp.id,
    scopes: ['openid'],
    at: t.clock.now(),
  });
});
afterAll(() => t.close());

function expectHtmlPage(res: LightMyRequestResponse, status: number): void {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status });
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toMatch(/^<!doctype html>/i);
}

async function signedIn(username = 'alice', password = 'correct horse battery'): Promise<Browser> {
  const browser = new Browser(t.app);
  const res = await browser.submit('/signin', '/signin', { username, password });
  expect(res.statusCode).toBe(303);
  expect(browser.cookies.has('idp_session')).toBe(true);
  return browser;
}

let clientCount = 0;
async function insertClient(name: string, siteUrl = 'https://site.example') {
  clientCount += 1;
  return t.database.db
    .insertInto('clients')
    .values({
      client_id: `pk_test_client_${clientCount}`,
      name,
      site_url: siteUrl,
      redirect_uris: [`${siteUrl}/callback`],
    })
    .returning(['id', 'client_id'])
    .executeTakeFirstOrThrow();
}

describe('pages and layout', () => {
  it('serves the sign-in form with the contract field names, labels and a CSRF token', async () => {
    const res = await new Browser(t.app).get('/signin');
    expectHtmlPage(res, 200);
    expect(res.body).toMatch(/<html lang="en">/);
    expect(res.body).toMatch(/<meta name="viewport" content="width=device-width, initial-scale=1">/);
    expect(res.body).toMatch(/<main\b/);
    // Scripts from this origin, by URL: no inline script (the CSP would refuse it anyway). The
    // show-password toggle, then the passkey library and button.
    expect([...res.body.matchAll(/<script\b[^>]*>/gi)].map((match) => match[0])).toEqual([
      expect.stringMatching(/^<script src="\/assets\/show-password\.js\?v=[A-Za-z0-9_-]+" defer>$/),
      expect.stringMatching(/^<script src="\/assets\/webauthn-browser\.js\?v=[A-Za-z0-9_-]+" defer>$/),
      expect.stringMatching(/^<script src="\/assets\/passkeys\.js\?v=[A-Za-z0-9_-]+" defer>$/),
    ]);
    expect(res.body).toMatch(/<script [^>]*><\/script>/);
    expect(res.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(res.headers['x-frame-options']).toBe('DENY');

    const form = formWithAction(res.body, '/signin');
    expect(form).toMatch(/<form method="post" action="\/signin"/);
    const fields = inputs(form);
    expect(fields.find((input) => input.name === 'username')?.type).toBe('text');
    expect(fields.find((input) => input.name === 'password')?.type).toBe('password');
    expect(fields.find((input) => input.name === 'csrf_token')?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(form).toMatch(/<button type="submit"/);
    // Every visible input has a label.
    for (const input of fields.filter((field) => field.type !== 'hidden')) {
      const id = attribute(input.tag, 'id');
      expect(form).toContain(`<label for="${id}">`);
    }
  });

  it('serves its stylesheet itself, versioned and cached for a year', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/signin' });
    const href = /<link rel="stylesheet" href="([^"]+)">/.exec(page.body)?.[1];
    expect(href).toMatch(/^\/assets\/styles\.css\?v=[A-Za-z0-9_-]+$/);
    const css = await t.app.inject({ method: 'GET', url: href as string });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(css.body).toContain('.button');
    const again = await t.app.inject({
      method: 'GET',
      url: href as string,
      headers: { 'if-none-match': css.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
  });

  it('lists the pages in the route catalogue as browser routes', async () => {
    const { routes } = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json() as {
      routes: Array<{ method: string; path: string; auth: string }>;
    };
    const auth = new Map(routes.map((route) => [`${route.method} ${route.path}`, route.auth]));
    for (const route of [
      'GET /signin',
      'POST /signin',
      'GET /signup',
      'POST /signup',
      'POST /signout',
      'GET /account',
      'POST /account/apps/revoke',
    ])
      expect(auth.get(route), route).toBe('browser');
    expect(auth.get('GET /assets/styles.css')).toBe('public');
  });

  it('answers malformed page requests with an HTML error page, not JSON', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/signin?request=not%20an%20id' });
    expectHtmlPage(res, 400);
    expect(res.body).toContain('request must be an authorization request id');
  });
});

describe('sign-up', () => {
  it('creates the account, signs in and goes to the account page', async () => {
    const browser = new Browser(t.app);
    const res = await browser.submit('/signup', '/signup', {
      username: 'Carol_1',
      password: 'a long enough password',
      email: ' carol@example.com ',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account');
    const found = await findCredentials(t.database.db, 'carol_1');
    expect(found?.user).toMatchObject({
      username: 'Carol_1',
      email: 'carol@example.com',
      emailVerified: false,
    });
    expect(found?.passwordHash).toMatch(/^\$argon2id\$/);

    const account = await browser.get('/account');
    expectHtmlPage(account, 200);
    expect(account.body).toContain('@Carol_1');
  });

  it('takes no e-mail when the field is left empty', async () => {
    const res = await new Browser(t.app).submit('/signup', '/signup', {
      username: 'dave',
      password: 'a long enough password',
      email: '',
    });
    expect(res.statusCode).toBe(303);
    expect((await findUserByUsername(t.database.db, 'dave'))?.email).toBeNull();
  });

  it.each([
    ['a short username', { username: 'ab' }, 'username', /3–32 characters/],
    ['a username of digits only', { username: '12345' }, 'username', /not only digits/],
    ['a username outside ASCII', { username: 'аlice' }, 'username', /letters a–z/],
    ['a reserved username', { username: 'Admin' }, 'username', /reserved/],
    ['a short password', { password: 'short' }, 'password', /at least 8 characters/],
    ['a long password', { password: 'x'.repeat(257) }, 'password', /at most 256 characters/],
    ['a malformed e-mail', { email: 'not-an-email' }, 'email', /valid e-mail/],
    ['a username taken in another case', { username: 'ALICE' }, 'username', /already taken/],
    ['a username taken in full-width letters', { username: 'Ａｌｉｃｅ' }, 'username', /already taken/],
    ['a username that looks like a taken one', { username: 'aIice' }, 'username', /already taken/],
  ] as const)(
    'shows the error for %s by its field, keeping the values but the password',
    async (_why, change, field, message) => {
      const browser = new Browser(t.app);
      const form = {
        username: 'erin',
        password: 'a long enough password',
        email: 'erin@example.com',
        ...change,
      };
      const res = await browser.submit('/signup', '/signup', form);
      expectHtmlPage(res, 400);
      const error = new RegExp(`<p class="field-error" id="${field}-error">([^<]*)</p>`).exec(res.body)?.[1];
      expect(unescapeHtml(error ?? '')).toMatch(message);
      // Only this field is marked.
      expect(res.body.match(/class="field-error"/g)).toHaveLength(1);
      const fields = inputs(formWithAction(res.body, '/signup'));
      const input = fields.find((candidate) => candidate.name === field);
      expect(input?.tag).toContain('aria-invalid="true"');
      expect(fields.find((candidate) => candidate.name === 'username')?.value).toBe(form.username);
      expect(fields.find((candidate) => candidate.name === 'email')?.value).toBe(form.email);
      expect(fields.find((candidate) => candidate.name === 'password')?.value).toBeUndefined();
      expect(res.body).not.toContain(form.password);
      // A fresh CSRF token comes with the re-rendered form, and no session was started.
      expect(hiddenFields(res.body, '/signup').csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(browser.cookies.has('idp_session')).toBe(false);
      expect(await findUserByUsername(t.database.db, 'erin')).toBeUndefined();
    },
  );

  it('reports every invalid field at once', async () => {
    const res = await new Browser(t.app).submit('/signup', '/signup', {
      username: '',
      password: '',
      email: 'x@',
    });
    expectHtmlPage(res, 400);
    for (const field of ['username', 'password', 'email']) expect(res.body).toContain(`id="${field}-error"`);
  });

  it('escapes what it echoes', async () => {
    const res = await new Browser(t.app).submit('/signup', '/signup', {
      username: '"><script>alert(1)</script>',
      password: 'a long enough password',
    });
    expectHtmlPage(res, 400);
    expect(res.body).not.toContain('<script>');
    expect(res.body).toContain('&lt;script&gt;');
  });
});

describe('sign-up with a common password', () => {
  /** A password of 8+ characters picked from the refused list at run time. */
  const picked = (() => {
    const eligible = [...commonPasswords()].filter((entry) => entry.length >= 8 && /[a-z]/.test(entry));
    return eligible[Math.floor(Math.random() * eligible.length)] as string;
  })();

  it.each([
    ['en', 'password1', /one of the most common ones/],
    ['en', picked, /one of the most common ones/],
    ['ru', 'qwerty123', /один из самых распространённых паролей/],
    ['ru', picked.toUpperCase(), /один из самых распространённых паролей/],
  ] as const)(
    'refuses it in %s (%s) by the password field, keeping the username',
    async (lang, password, text) => {
      const browser = new Browser(t.app);
      browser.cookies.set('lang', lang);
      const res = await browser.submit('/signup', '/signup', {
        username: 'common_pw',
        password,
        email: 'common_pw@example.com',
      });
      expectHtmlPage(res, 400);
      expect(res.body).toContain(`lang="${lang}"`);
      const error = /<p class="field-error" id="password-error">([^<]*)<\/p>/.exec(res.body)?.[1];
      expect(unescapeHtml(error ?? '')).toMatch(text);
      expect(res.body.match(/class="field-error"/g)).toHaveLength(1);
      const fields = inputs(formWithAction(res.body, '/signup'));
      expect(fields.find((input) => input.name === 'password')?.tag).toContain('aria-invalid="true"');
      expect(fields.find((input) => input.name === 'username')?.value).toBe('common_pw');
      expect(fields.find((input) => input.name === 'password')?.value).toBeUndefined();
      expect(await findUserByUsername(t.database.db, 'common_pw')).toBeUndefined();
    },
  );

  it('accepts a rare password', async () => {
    const res = await new Browser(t.app).submit('/signup', '/signup', {
      username: 'rare_password',
      password: 'x7#kQ!p2 rare',
      email: '',
    });
    expect(res.statusCode).toBe(303);
    expect(await findUserByUsername(t.database.db, 'rare_password')).toBeDefined();
  });
});

describe('sign-in', () => {
  it('signs in and goes to the account page', async () => {
    const browser = new Browser(t.app);
    const res = await browser.submit('/signin', '/signin', {
      username: 'alice',
      password: 'correct horse battery',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account');
    expect(res.headers['cache-control']).toBe('no-store');
    const account = await browser.get('/account');
    expectHtmlPage(account, 200);
    expect(account.body).toContain('@alice');
  });

  it.each(['ALICE', 'Ａｌｉｃｅ', ' alice '])(
    'finds the user as %j (case-insensitive, NFKC)',
    async (username) => {
      const res = await new Browser(t.app).submit('/signin', '/signin', {
        username,
        password: 'correct horse battery',
      });
      expect(res.statusCode).toBe(303);
    },
  );

  it('answers a wrong password and an unknown user alike, after one argon2 verify each', async () => {
    const verify = vi.spyOn(argon2, 'verify');
    try {
      const wrongPassword = await new Browser(t.app).submit('/signin', '/signin', {
        username: 'alice',
        password: 'wrong horse battery',
      });
      expect(verify).toHaveBeenCalledTimes(1);
      const unknownUser = await new Browser(t.app).submit('/signin', '/signin', {
        username: 'nobody_here',
        password: 'wrong horse battery',
      });
      expect(verify).toHaveBeenCalledTimes(2);

      const message = (res: LightMyRequestResponse) =>
        unescapeHtml(/<p class="alert" role="alert"[^>]*>([^<]*)<\/p>/.exec(res.body)?.[1] ?? '');
      for (const res of [wrongPassword, unknownUser]) {
        expectHtmlPage(res, 401);
        expect(message(res)).toBe('Wrong username or password.');
        expect(res.cookies.map((cookie) => cookie.name)).not.toContain('idp_session');
      }
      // The username is kept, the password is not.
      const fields = inputs(formWithAction(unknownUser.body, '/signin'));
      expect(fields.find((input) => input.name === 'username')?.value).toBe('nobody_here');
      expect(fields.find((input) => input.name === 'password')?.value).toBeUndefined();
    } finally {
      verify.mockRestore();
    }
  });

  it('refuses a password longer than any account can have, still after one verify', async () => {
    const verify = vi.spyOn(argon2, 'verify');
    try {
      const res = await new Browser(t.app).submit('/signin', '/signin', {
        username: 'alice',
        password: 'x'.repeat(100_000),
      });
      expectHtmlPage(res, 401);
      expect(res.body).toContain('Wrong username or password.');
      expect(verify).toHaveBeenCalledTimes(1);
      expect(verify.mock.calls[0]?.[1]).toBe('');
    } finally {
      verify.mockRestore();
    }
  });

  it('asks for both fields when one is empty', async () => {
    const res = await new Browser(t.app).submit('/signin', '/signin', { username: 'alice', password: '' });
    expectHtmlPage(res, 400);
    expect(res.body).toContain('Enter your username and password.');
  });

  it('tells a disabled user so only when the password is right', async () => {
    const user = await createUser(
      t.database.db,
      { config: t.config, clock: t.clock },
      { username: 'frank', password: 'frank password' },
    );
    await t.database.db
      .updateTable('users')
      .set({ disabled_at: t.clock.now() })
      .where('id', '=', user.id)
      .execute();

    const wrong = await new Browser(t.app).submit('/signin', '/signin', {
      username: 'frank',
      password: 'not the password',
    });
    expectHtmlPage(wrong, 401);
    expect(wrong.body).toContain('Wrong username or password.');
    expect(wrong.body).not.toMatch(/disabled/i);

    const right = new Browser(t.app);
    const res = await right.submit('/signin', '/signin', { username: 'frank', password: 'frank password' });
    expectHtmlPage(res, 403);
    expect(res.body).toContain('This account has been disabled');
    expect(right.cookies.has('idp_session')).toBe(false);
  });
});

describe('where sign-in leads', () => {
  const signInVia = async (pageUrl: string) =>
    new Browser(t.app).submit(pageUrl, '/signin', { username: 'alice', password: 'correct horse battery' });

  it('returns to a safe return_to path', async () => {
    const res = await signInVia(`/signin?return_to=${encodeURIComponent('/account?tab=apps')}`);
    expect(res.headers.location).toBe('/account?tab=apps');
  });

  it.each([
    'https://evil.com',
    '//evil.com',
    '/\\evil.com',
    '/%2F%2Fevil.com',
    '/\t/evil.com',
    'javascript:alert(1)',
  ])('lands on /account for the open-redirect attempt %j', async (returnTo) => {
    const page = await new Browser(t.app).get(`/signin?return_to=${encodeURIComponent(returnTo)}`);
    // The unsafe value is not even carried in the form.
    expect(hiddenFields(page.body, '/signin').return_to).toBeUndefined();
    const res = await new Browser(t.app).submit('/signin', '/signin', {
      username: 'alice',
      password: 'correct horse battery',
      return_to: returnTo,
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account');
  });

  it('goes back into the OAuth flow when an authorization request is waiting', async () => {
    const requestId = 'Req_abc-123_XYZ';
    const page = await new Browser(t.app).get(`/signin?request=${requestId}&return_to=/account`);
    expect(hiddenFields(page.body, '/signin')).toMatchObject({ request: requestId, return_to: '/account' });
    const res = await signInVia(`/signin?request=${requestId}&return_to=/account`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/api/v1/oauth/authorize/resume?request=${requestId}`);
  });

  it('carries request and return_to between sign-in and sign-up', async () => {
    const signin = await new Browser(t.app).get('/signin?request=abc_DEF&return_to=/account');
    const signupHref = unescapeHtml(/<a href="(\/signup[^"]*)"/.exec(signin.body)?.[1] ?? '');
    expect(new URL(signupHref, 'http://x').searchParams.get('request')).toBe('abc_DEF');
    expect(new URL(signupHref, 'http://x').searchParams.get('return_to')).toBe('/account');

    const browser = new Browser(t.app);
    const signup = await browser.get(signupHref);
    expect(hiddenFields(signup.body, '/signup')).toMatchObject({ request: 'abc_DEF', return_to: '/account' });
    const signinHref = unescapeHtml(/<a href="(\/signin[^"]*)"/.exec(signup.body)?.[1] ?? '');
    expect(new URL(signinHref, 'http://x').searchParams.get('request')).toBe('abc_DEF');

    const res = await browser.post('/signup', {
      ...hiddenFields(signup.body, '/signup'),
      username: 'grace',
      password: 'a long enough password',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/api/v1/oauth/authorize/resume?request=abc_DEF');
  });
});

describe('CSRF protection', () => {
  const postForms = [
    ['/signin', '/signin', { username: 'alice', password: 'correct horse battery' }],
    ['/signup', '/signup', { username: 'mallory', password: 'a long enough password' }],
    ['/account', '/signout', {}],
    ['/account', '/account/apps/revoke', {}],
  ] as const;

  it.each(postForms)(
    'refuses a POST to %s → %s without a token, with a wrong one or with another browser’s',
    async (page, action, formFields) => {
      const fields = action === '/account/apps/revoke' ? { client_id: alicesApp.client_id } : formFields;
      const browser = await signedIn();
      const other = await signedIn();
      const own = hiddenFields((await browser.get(page)).body, action);
      const foreign = hiddenFields((await other.get(page)).body, action);
      expect(own.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(foreign.csrf_token).not.toBe(own.csrf_token);

      const attempts: Array<Record<string, string>> = [
        { ...fields },
        { ...fields, csrf_token: '' },
        { ...fields, csrf_token: 'x'.repeat(43) },
        { ...fields, csrf_token: `${own.csrf_token}x` },
        { ...fields, csrf_token: foreign.csrf_token as string },
      ];
      const session = browser.cookies.get('idp_session');
      for (const form of attempts) {
        const res = await browser.post(action, form);
        expectHtmlPage(res, 403);
        expect(res.body).toContain('This form has expired');
      }
      // Nothing happened: the same session still works, nobody signed up, the app keeps its access.
      expect(browser.cookies.get('idp_session')).toBe(session);
      const account = await browser.get('/account');
      expect(account.statusCode).toBe(200);
      expect(account.body).toContain('Alice’s app');
      if (action === '/signup') expect(await findUserByUsername(t.database.db, 'mallory')).toBeUndefined();
      // The same form with its own token does go through (the refusals were the token's doing).
      const res = await browser.post(action, {
        ...fields,
        ...hiddenFields((await browser.get(page)).body, action),
      });
      expect(res.statusCode).toBe(303);
    },
  );

  it('refuses a valid token without its cookie', async () => {
    const browser = new Browser(t.app);
    const token = hiddenFields((await browser.get('/signin')).body, '/signin').csrf_token as string;
    browser.cookies.delete('idp_csrf');
    const res = await browser.post('/signin', {
      csrf_token: token,
      username: 'alice',
      password: 'correct horse battery',
    });
    expectHtmlPage(res, 403);
  });

  it('refuses a POST with no body at all', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/signout' });
    expectHtmlPage(res, 403);
  });
});

describe('account page', () => {
  it('sends a visitor who is not signed in to the sign-in page, and back', async () => {
    const res = await new Browser(t.app).get('/account');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/signin?return_to=/account');
    const signin = await new Browser(t.app).get(res.headers.location as string);
    expect(hiddenFields(signin.body, '/signin').return_to).toBe('/account');
  });

  it('lists the apps the user allowed, and revoking one removes it and revokes its grants', async () => {
    const owner = await createUser(
      t.database.db,
      { config: t.config, clock: t.clock },
      { username: 'heidi', password: 'heidi password' },
    );
    const other = await createUser(
      t.database.db,
      { config: t.config, clock: t.clock },
      { username: 'ivan', password: 'ivan password' },
    );
    const client = await insertClient('Quiz <Night> & Co', 'https://quiz.example');
    const kept = await insertClient('Kept app', 'https://kept.example');
    const at = new Date('2026-05-20T10:00:00Z');
    await saveConsent(t.database.db, {
      userId: owner.id,
      clientPk: client.id,
      scopes: ['openid', 'profile', 'wallet'],
      at,
    });
    await saveConsent(t.database.db, { userId: owner.id, clientPk: kept.id, scopes: ['openid'], at });
    await saveConsent(t.database.db, { userId: other.id, clientPk: client.id, scopes: ['openid'], at });
    const grant = (userId: number, clientPk: number) =>
      t.database.db
        .insertInto('grants')
        .values({ user_id: userId, client_pk: clientPk, scopes: ['openid'], auth_time: at, created_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
    const ownerGrant = await grant(owner.id, client.id);
    const keptGrant = await grant(owner.id, kept.id);
    const otherGrant = await grant(other.id, client.id);

    const browser = await signedIn('heidi', 'heidi password');
    const page = await browser.get('/account');
    expectHtmlPage(page, 200);
    expect(page.body).toContain('Quiz &lt;Night&gt; &amp; Co');
    expect(page.body).not.toContain('<Night>');
    expect(page.body).toContain('href="https://quiz.example/"');
    for (const scope of ['openid', 'profile', 'wallet'] as const)
      expect(page.body).toContain(`<li>${SCOPES[scope].description}</li>`);
    expect(page.body).toContain('<time datetime="2026-05-20T10:00:00.000Z">20 May 2026</time>');
    const revokeForms = forms(page.body).filter((form) => form.action === '/account/apps/revoke');
    expect(revokeForms.map((form) => hiddenFieldsOf(form.html).client_id).sort()).toEqual(
      [client.client_id, kept.client_id].sort(),
    );
    expect(formWithAction(page.body, '/signout')).toMatch(/<button type="submit"/);

    const revokeForm = revokeForms.find((form) => hiddenFieldsOf(form.html).client_id === client.client_id);
    t.clock.set('2026-06-02T08:00:00Z');
    const res = await browser.post('/account/apps/revoke', hiddenFieldsOf(revokeForm?.html ?? ''));
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account?notice=revoked');

    const after = await browser.get(res.headers.location as string);
    expect(after.body).toContain('Access revoked.');
    expect(after.body).not.toContain('Quiz &lt;Night&gt;');
    expect(after.body).toContain('Kept app');

    const consents = await t.database.db
      .selectFrom('consents')
      .select(['user_id', 'client_pk'])
      .where('client_pk', 'in', [client.id, kept.id])
      .execute();
    expect(consents).toEqual(
      expect.arrayContaining([
        { user_id: owner.id, client_pk: kept.id },
        { user_id: other.id, client_pk: client.id },
      ]),
    );
    expect(consents).toHaveLength(2);
    const revokedAt = async (id: number) =>
      (
        await t.database.db
          .selectFrom('grants')
          .select('revoked_at')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).revoked_at;
    expect(await revokedAt(ownerGrant.id)).toEqual(new Date('2026-06-02T08:00:00Z'));
    expect(await revokedAt(keptGrant.id)).toBeNull();
    expect(await revokedAt(otherGrant.id)).toBeNull();
  });

  it('says so when the app had no access', async () => {
    const browser = await signedIn();
    const page = await browser.get('/account');
    const res = await browser.post('/account/apps/revoke', {
      ...hiddenFields(page.body, '/signout'),
      client_id: 'pk_unknown',
    });
    expect(res.headers.location).toBe('/account?notice=unknown_app');
    expect((await browser.get('/account?notice=unknown_app')).body).toContain('That app had no access');
    // Notices are known keys only: the query never puts text on the page.
    expect((await browser.get('/account?notice=%3Cb%3Ehi')).body).not.toContain('hi</b>');
  });
});

describe('consent page', () => {
  const consentData = (change: Record<string, unknown> = {}) => ({
    csrfToken: 'csrf-token-value',
    requestId: 'req_ABC-123',
    client: { name: 'Quiz <Night>', siteUrl: 'https://quiz.example/"onmouseover="x' },
    user: { username: 'alice' },
    scopes: ['openid', 'profile', 'email', 'verified'],
    emailRequested: true,
    walletRequested: false,
    ...change,
  });
  const renderConsent = (data: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/test/consent', payload: data });

  it('posts the decision with the request id, the CSRF token, the e-mail choice and allow/deny', async () => {
    const res = await renderConsent(consentData());
    expectHtmlPage(res, 200);
    expect(res.headers['x-frame-options']).toBe('DENY');
    const form = formWithAction(res.body, '/api/v1/oauth/authorize/decision');
    expect(form).toMatch(/^<form method="post"/);
    expect(hiddenFieldsOf(form)).toEqual({ csrf_token: 'csrf-token-value', request: 'req_ABC-123' });
    const email = inputs(form).find((input) => input.name === 'share_email');
    expect(email).toMatchObject({ type: 'checkbox', value: '1' });
    expect(email?.tag).toMatch(/\schecked\b/);
    expect(form).toContain('<label for="share_email">');
    const buttons = [...form.matchAll(/<button\b[^>]*>/g)].map((match) => match[0]);
    expect(
      buttons.map((tag) => [attribute(tag, 'type'), attribute(tag, 'name'), attribute(tag, 'value')]),
    ).toEqual([
      ['submit', 'decision', 'allow'],
      ['submit', 'decision', 'deny'],
    ]);
    for (const scope of ['openid', 'profile', 'email', 'verified'] as const)
      expect(res.body).toContain(SCOPES[scope].description);
    expect(res.body).toContain('@alice');
    expect(res.body).not.toMatch(/wallet/i);
  });

  it('shows the client as registered, escaped', async () => {
    const res = await renderConsent(consentData());
    expect(res.body).toContain('Quiz &lt;Night&gt;');
    expect(res.body).toContain('https://quiz.example/&#34;onmouseover=&#34;x');
    expect(res.body).not.toContain('<Night>');
    expect(res.body).not.toContain('"onmouseover');
  });

  it('has no e-mail checkbox when the e-mail is not asked for', async () => {
    const res = await renderConsent(
      consentData({
        emailRequested: false,
        scopes: ['openid'],
      }),
    );
    expect(res.body).not.toContain('share_email');
  });

  it('says plainly when the site will be able to charge the wallet', async () => {
    const res = await renderConsent(
      consentData({
        walletRequested: true,
        scopes: ['wallet'],
        emailRequested: false,
      }),
    );
    expect(res.body).toContain('Quiz &lt;Night&gt; will be able to charge coins from your wallet.');
  });
});
