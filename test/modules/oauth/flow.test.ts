import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableUser, enableUser } from '../../../src/modules/accounts/accounts.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { Browser, forms, hiddenFields, hiddenFieldsOf, inputs } from '../../helpers/browser.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../../helpers/factories.js';
import { authorizeUrl, basic, postForm } from '../../helpers/http.js';

// The browser side of the flow through the real routes, up to what revoking and disabling do.
let t: TestApp;
let client: TestClient;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t, { wallet: true });
  user = await makeUser(t);
});
afterAll(() => t.close());

/** The redirect back to the client, parsed. */
function callback(res: LightMyRequestResponse, c: TestClient = client): URLSearchParams {
  expect([302, 303]).toContain(res.statusCode);
  const location = new URL(res.headers.location as string);
  expect(`${location.origin}${location.pathname}`).toBe(c.redirectUri);
  expect(location.searchParams.get('iss')).toBe(t.config.PUBLIC_URL);
  return location.searchParams;
}

function expectConsentPage(res: LightMyRequestResponse): string {
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  expect(res.body).toContain('name="decision"');
  return res.body;
}

async function decide(browser: Browser, page: string, fields: Record<string, string>) {
  const hidden = hiddenFields(page, '/api/v1/oauth/authorize/decision');
  return browser.post('/api/v1/oauth/authorize/decision', { ...hidden, ...fields });
}

async function exchange(c: TestClient, code: string) {
  return postForm(
    t.app,
    '/api/v1/oauth/token',
    { grant_type: 'authorization_code', code, redirect_uri: c.redirectUri },
    { authorization: basic(c) },
  );
}

describe('sign-in and consent', () => {
  it('walks a signed-out user through sign-in and consent to a code', async () => {
    const browser = new Browser(t.app);
    const start = await browser.get(authorizeUrl(client, { scope: 'openid profile email', nonce: 'n-1' }));
    expect(start.statusCode).toBe(302);
    const signinUrl = start.headers.location as string;
    expect(signinUrl).toMatch(/^\/signin\?request=/);

    const signedIn = await browser.signIn(user, signinUrl);
    const resume = signedIn.headers.location as string;
    expect(resume).toMatch(/^\/api\/v1\/oauth\/authorize\/resume\?request=/);

    const page = expectConsentPage(await browser.get(resume));
    expect(page).toContain('Test Site');
    expect(page).toContain('https://site.example');
    const checkbox = inputs(page).find((input) => input.name === 'share_email');
    expect(checkbox?.type).toBe('checkbox');
    expect(checkbox?.value).toBe('1');
    expect(checkbox?.tag).toMatch(/\schecked\b/);

    const params = callback(await decide(browser, page, { decision: 'allow', share_email: '1' }));
    expect(params.get('state')).toBe('st-1');
    const code = params.get('code') as string;
    expect(code).toMatch(/^ac_[A-Za-z0-9_-]{43}$/);
    const tokens = await exchange(client, code);
    expect(tokens.statusCode).toBe(200);
    expect(tokens.json().scope).toBe('openid profile email');
  });

  it('names the registered client, never a name from the request', async () => {
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const page = expectConsentPage(
      await browser.get(
        authorizeUrl(client, { scope: 'openid wallet', client_name: 'Evil Corp', prompt: 'consent' }),
      ),
    );
    expect(page).not.toContain('Evil Corp');
    expect(page).toMatch(/coins/i); // the wallet scope is said plainly
  });

  it('remembers consent for the same or fewer scopes, and asks again for more or with prompt=consent', async () => {
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const page = expectConsentPage(
      await browser.get(authorizeUrl(client, { scope: 'openid profile verified' })),
    );
    callback(await decide(browser, page, { decision: 'allow' }));

    const same = callback(await browser.get(authorizeUrl(client, { scope: 'openid profile verified' })));
    expect(same.get('code')).toMatch(/^ac_/);
    const fewer = callback(await browser.get(authorizeUrl(client, { scope: 'openid' })));
    expect(fewer.get('code')).toMatch(/^ac_/);
    expectConsentPage(await browser.get(authorizeUrl(client, { scope: 'openid profile verified wallet' })));
    expectConsentPage(await browser.get(authorizeUrl(client, { scope: 'openid', prompt: 'consent' })));
  });

  it('drops email from the grant when the box is unchecked', async () => {
    const other = await makeClient(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const page = expectConsentPage(await browser.get(authorizeUrl(other)));
    const params = callback(await decide(browser, page, { decision: 'allow' }), other);
    const tokens = (await exchange(other, params.get('code') as string)).json();
    expect(tokens.scope).toBe('openid profile verified');
    const userinfo = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.json()).not.toHaveProperty('email');
    expect(userinfo.json()).not.toHaveProperty('email_verified');
    const payload = JSON.parse(Buffer.from(tokens.id_token.split('.')[1], 'base64url').toString('utf8'));
    expect(payload).not.toHaveProperty('email');
    // The withheld e-mail is not remembered as allowed: asking for it shows the page again.
    expectConsentPage(await browser.get(authorizeUrl(other)));
  });

  it('redirects a denial with access_denied, state and iss', async () => {
    const other = await makeClient(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const page = expectConsentPage(await browser.get(authorizeUrl(other, { state: 'deny-me' })));
    const params = callback(await decide(browser, page, { decision: 'deny' }), other);
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe('deny-me');
    expect(params.has('code')).toBe(false);
  });

  it('binds a decision to its one request: it cannot be replayed, forged or posted without a session', async () => {
    const other = await makeClient(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const page = expectConsentPage(await browser.get(authorizeUrl(other, { state: 'first' })));
    const params = callback(await decide(browser, page, { decision: 'allow' }), other);
    expect(params.get('state')).toBe('first');
    // The same request again: used up.
    const replay = await decide(browser, page, { decision: 'allow' });
    expect(replay.statusCode).toBe(400);
    expect(replay.headers.location).toBeUndefined();

    const second = expectConsentPage(
      await browser.get(authorizeUrl(other, { state: 'second', prompt: 'consent' })),
    );
    const forged = await decide(browser, second, { decision: 'allow', csrf_token: 'forged' });
    expect(forged.statusCode).toBe(403);
    const stranger = new Browser(t.app);
    const noSession = await decide(stranger, second, { decision: 'allow' });
    expect(noSession.statusCode).toBe(403); // a stranger lacks the CSRF cookie the token is bound to
    // The request itself is still intact for its own browser.
    expect(callback(await decide(browser, second, { decision: 'allow' }), other).get('state')).toBe('second');
  });

  it('shows an expired request as a page, not a redirect', async () => {
    const browser = new Browser(t.app);
    const start = await browser.get(authorizeUrl(client));
    const signinUrl = start.headers.location as string;
    t.clock.advance(31 * 60 * 1000);
    const signedIn = await browser.signIn(user, signinUrl);
    const resume = await browser.get(signedIn.headers.location as string);
    expect(resume.statusCode).toBe(400);
    expect(resume.headers.location).toBeUndefined();
    expect(resume.headers['content-type']).toMatch(/^text\/html/);
  });
});

describe('prompt', () => {
  it('prompt=none answers with a code when signed in and allowed, and consent_required otherwise', async () => {
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const page = expectConsentPage(
      await browser.get(authorizeUrl(client, { scope: 'openid', prompt: 'consent' })),
    );
    callback(await decide(browser, page, { decision: 'allow' }));
    expect(
      callback(await browser.get(authorizeUrl(client, { scope: 'openid', prompt: 'none' }))).get('code'),
    ).toMatch(/^ac_/);
    const fresh = await makeClient(t);
    const refused = callback(await browser.get(authorizeUrl(fresh, { prompt: 'none' })), fresh);
    expect(refused.get('error')).toBe('consent_required');
  });

  it('prompt=login asks for the password again even with a session', async () => {
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const first = await browser.get(authorizeUrl(client, { scope: 'openid', prompt: 'login' }));
    expect(first.headers.location).toMatch(/^\/signin\?request=/);
    const request = new URL(first.headers.location as string, 'http://x').searchParams.get(
      'request',
    ) as string;
    // Coming back without signing in again is not enough.
    const skipped = await browser.get(`/api/v1/oauth/authorize/resume?request=${request}`);
    expect(skipped.headers.location).toBe(first.headers.location);

    t.clock.advance(1000);
    const signedIn = await browser.signIn(user, first.headers.location as string);
    const done = await browser.get(signedIn.headers.location as string);
    const params = callback(done);
    const tokens = (await exchange(client, params.get('code') as string)).json();
    const claims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1], 'base64url').toString('utf8'));
    expect(claims.auth_time).toBe(Math.floor(t.clock.now().getTime() / 1000));
  });
});

describe('what stops tokens', () => {
  async function tokenFor(c: TestClient, who: TestUser): Promise<{ browser: Browser; token: string }> {
    const browser = new Browser(t.app);
    await browser.signIn(who);
    let res = await browser.get(authorizeUrl(c, { scope: 'openid profile' }));
    if (res.statusCode === 200) res = await decide(browser, res.body, { decision: 'allow' });
    const tokens = (await exchange(c, callback(res, c).get('code') as string)).json();
    return { browser, token: tokens.access_token };
  }

  const userinfo = (token: string) =>
    t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${token}` },
    });

  it('revoking the app on the account page stops its tokens and forgets the consent', async () => {
    const app = await makeClient(t);
    const { browser, token } = await tokenFor(app, user);
    expect((await userinfo(token)).statusCode).toBe(200);
    const account = await browser.get('/account');
    expect(account.body).toContain(app.clientId);
    const form = forms(account.body).find(
      (candidate) => candidate.action === '/account/apps/revoke' && candidate.html.includes(app.clientId),
    );
    expect(form).toBeDefined();
    const revoked = await browser.post('/account/apps/revoke', hiddenFieldsOf(form?.html ?? ''));
    expect(revoked.statusCode).toBe(303);
    expectApiError(await userinfo(token), 401, 'invalid_token');
    expectConsentPage(await browser.get(authorizeUrl(app, { scope: 'openid profile' })));
  });

  it('disabling the user stops their tokens and their session at once', async () => {
    const victim = await makeUser(t);
    const app = await makeClient(t);
    const { browser, token } = await tokenFor(app, victim);
    await disableUser(t.database.db, { config: t.config, clock: t.clock }, { username: victim.username });
    expectApiError(await userinfo(token), 401, 'invalid_token');
    const again = await browser.get(authorizeUrl(app, { prompt: 'none' }));
    expect(callback(again, app).get('error')).toBe('login_required');
    // Enabling the account again does not revive what it had.
    await enableUser(t.database.db, { config: t.config, clock: t.clock }, { username: victim.username });
    expectApiError(await userinfo(token), 401, 'invalid_token');
  });

  it('disabling the client stops its tokens', async () => {
    const app = await makeClient(t);
    const { token } = await tokenFor(app, user);
    await t.database.db
      .updateTable('clients')
      .set({ disabled_at: t.clock.now() })
      .where('client_id', '=', app.clientId)
      .execute();
    expectApiError(await userinfo(token), 401, 'invalid_token');
  });
});
