import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableUser, enableUser } from '../../../src/modules/accounts/accounts.service.js';
import { updateClient } from '../../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../../helpers/factories.js';
import { authorizeUrl, basic, exchangeCode, postForm } from '../../helpers/http.js';

/**
 * Decisions that end access end all of it (revoking an app, disabling a user or a client: codes not
 * yet redeemed included), and the steps after sign-in check what the authorize step checked
 * (prompt=login, OIDC Core §3.1.2.1 max_age).
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const authorize = (c: TestClient, params: Record<string, string> = {}) =>
  authorizeUrl(c, { scope: 'openid profile offline_access', ...params });

function codeOf(res: LightMyRequestResponse): string {
  expect([302, 303]).toContain(res.statusCode);
  const code = new URL(String(res.headers.location)).searchParams.get('code');
  expect(code).toMatch(/^ac_/);
  return code as string;
}

/** A signed-in browser that allows `client` through the consent page and gets a code. */
async function consentedCode(browser: Browser, client: TestClient, params: Record<string, string> = {}) {
  const page = await browser.get(authorize(client, { prompt: 'consent', ...params }));
  expect(page.statusCode).toBe(200);
  return codeOf(
    await browser.post('/api/v1/oauth/authorize/decision', {
      ...hiddenFields(page.body, '/api/v1/oauth/authorize/decision'),
      decision: 'allow',
    }),
  );
}

const refresh = (c: TestClient, refreshToken: string) =>
  postForm(
    t.app,
    '/api/v1/oauth/token',
    { grant_type: 'refresh_token', refresh_token: refreshToken },
    { authorization: basic(c) },
  );

const later = (seconds: number) => t.clock.set(new Date(t.clock.now().getTime() + seconds * 1000));

/** A new site, a new user, and that user's browser, signed in. */
async function signedInUser(): Promise<{ client: TestClient; user: TestUser; browser: Browser }> {
  const client = await makeClient(t);
  const user = await makeUser(t);
  const browser = new Browser(t.app);
  await browser.signIn(user);
  return { client, user, browser };
}

describe('a code issued before access ended mints nothing', () => {
  it('revoking the app on /account: the unredeemed code fails, and the app is gone for good', async () => {
    const { client, browser } = await signedInUser();
    const code = await consentedCode(browser, client);
    later(1);

    const revoked = await browser.submit('/account', '/account/apps/revoke', { client_id: client.clientId });
    expect(revoked.headers.location).toBe('/account?notice=revoked');
    expectApiError(await exchangeCode(t.app, client, code), 400, 'invalid_grant');
    expect((await browser.get('/account')).body).not.toContain(client.clientId);

    // Allowing the app again gives a new code that works; the old one still does not.
    later(1);
    const fresh = await consentedCode(browser, client);
    expect((await exchangeCode(t.app, client, fresh)).statusCode).toBe(200);
    expectApiError(await exchangeCode(t.app, client, code), 400, 'invalid_grant');
  });

  it('the redemption itself checks the consent: a code whose consent is gone is refused', async () => {
    const { client, user, browser } = await signedInUser();
    const code = await consentedCode(browser, client);
    // The consent goes without the revocation path (as if removed between issuing and redeeming).
    await t.database.db.deleteFrom('consents').where('user_id', '=', user.id).execute();
    const res = await exchangeCode(t.app, client, code);
    expectApiError(res, 400, 'invalid_grant');
    expect(res.json().error_description).toMatch(/revoked/);
  });

  it('disabling the user ends the unredeemed code; enabling again does not bring it back', async () => {
    const { client, user, browser } = await signedInUser();
    const code = await consentedCode(browser, client);
    await disableUser(t.database.db, { config: t.config, clock: t.clock }, { username: user.username });
    await enableUser(t.database.db, { config: t.config, clock: t.clock }, { username: user.username });
    expectApiError(await exchangeCode(t.app, client, code), 400, 'invalid_grant');
  });

  it('disabling the client ends its codes and tokens, also after it is enabled again', async () => {
    const { client, browser } = await signedInUser();
    const tokens = (await exchangeCode(t.app, client, await consentedCode(browser, client))).json() as {
      access_token: string;
      refresh_token: string;
    };
    const code = await consentedCode(browser, client);
    await updateClient(t.database.db, { config: t.config, clock: t.clock }, client.clientId, {
      disabled: true,
    });
    await updateClient(t.database.db, { config: t.config, clock: t.clock }, client.clientId, {
      disabled: false,
    });
    expectApiError(await exchangeCode(t.app, client, code), 400, 'invalid_grant');
    const userinfo = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expectApiError(userinfo, 401, 'invalid_token');
    expectApiError(await refresh(client, tokens.refresh_token), 400, 'invalid_grant');
  });

  it('a refresh token stops working when the app is revoked', async () => {
    const { client, browser } = await signedInUser();
    const tokens = (await exchangeCode(t.app, client, await consentedCode(browser, client))).json() as {
      refresh_token: string;
    };
    await browser.submit('/account', '/account/apps/revoke', { client_id: client.clientId });
    expectApiError(await refresh(client, tokens.refresh_token), 400, 'invalid_grant');
  });
});

describe('prompt=login and max_age cannot be skipped', () => {
  it('prompt=login: a decision posted with the old session goes to sign-in, and no code is issued', async () => {
    const { client, user, browser } = await signedInUser();
    // Allowed before, so only the sign-in stands between the request and a code.
    await consentedCode(browser, client);
    const redirect = await browser.get(authorize(client, { prompt: 'login consent' }));
    expect(redirect.headers.location).toMatch(/^\/signin\?request=/);
    const requestId = new URL(String(redirect.headers.location), 'http://x').searchParams.get(
      'request',
    ) as string;
    const signinPage = await browser.get(String(redirect.headers.location));
    const csrf = hiddenFields(signinPage.body, '/signin').csrf_token as string;
    const skipped = await browser.post('/api/v1/oauth/authorize/decision', {
      request: requestId,
      csrf_token: csrf,
      decision: 'allow',
    });
    expect(skipped.statusCode).toBe(303);
    expect(skipped.headers.location).toBe(`/signin?request=${requestId}`);

    // Signing in makes it right, and the request is still there.
    later(5);
    const signedIn = await browser.signIn(user, String(redirect.headers.location));
    const consent = await browser.get(String(signedIn.headers.location));
    expect(consent.statusCode).toBe(200);
    const code = codeOf(
      await browser.post('/api/v1/oauth/authorize/decision', {
        ...hiddenFields(consent.body, '/api/v1/oauth/authorize/decision'),
        decision: 'allow',
      }),
    );
    const idToken = ((await exchangeCode(t.app, client, code)).json() as { id_token: string }).id_token;
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1] as string, 'base64url').toString());
    expect(claims.auth_time).toBe(Math.floor(t.clock.now().getTime() / 1000));
  });

  it('max_age: a session older than max_age signs in again; a recent one does not', async () => {
    const { client, user, browser } = await signedInUser();
    const signedInAt = Math.floor(t.clock.now().getTime() / 1000);
    await consentedCode(browser, client);
    later(120);

    const recent = await browser.get(authorize(client, { max_age: '300' }));
    const recentCode = codeOf(recent);
    const claims = (code: string) =>
      exchangeCode(t.app, client, code).then((res) => {
        const token = (res.json() as { id_token: string }).id_token;
        return JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString());
      });
    expect((await claims(recentCode)).auth_time).toBe(signedInAt);

    const old = await browser.get(authorize(client, { max_age: '60' }));
    expect(old.headers.location).toMatch(/^\/signin\?request=/);
    const none = await browser.get(authorize(client, { max_age: '60', prompt: 'none' }));
    expect(new URL(String(none.headers.location)).searchParams.get('error')).toBe('login_required');

    const signedIn = await browser.signIn(user, String(old.headers.location));
    const code = codeOf(await browser.get(String(signedIn.headers.location)));
    expect((await claims(code)).auth_time).toBe(Math.floor(t.clock.now().getTime() / 1000));
  });

  it('max_age=0 asks for a sign-in every time, which then satisfies it', async () => {
    const { client, user, browser } = await signedInUser();
    await consentedCode(browser, client);
    later(1);
    const redirect = await browser.get(authorize(client, { max_age: '0' }));
    expect(redirect.headers.location).toMatch(/^\/signin\?request=/);
    later(1);
    const signedIn = await browser.signIn(user, String(redirect.headers.location));
    codeOf(await browser.get(String(signedIn.headers.location)));
  });

  it('max_age: a decision posted after max_age ran out goes to sign-in', async () => {
    const { client, browser } = await signedInUser();
    const page = await browser.get(authorize(client, { max_age: '60' }));
    expect(page.statusCode).toBe(200);
    later(120);
    const fields = hiddenFields(page.body, '/api/v1/oauth/authorize/decision');
    const res = await browser.post('/api/v1/oauth/authorize/decision', { ...fields, decision: 'allow' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/signin?request=${fields.request}`);
  });

  it.each(['-1', '1.5', 'abc', '99999999999'])('refuses max_age=%s with invalid_request', async (value) => {
    const client = await makeClient(t);
    const res = await t.app.inject({ method: 'GET', url: authorize(client, { max_age: value }) });
    expect(new URL(String(res.headers.location)).searchParams.get('error')).toBe('invalid_request');
  });

  it('a redirect URI removed while the user signed in ends the request on a page', async () => {
    const client = await makeClient(t, {
      redirectUris: ['https://site.example/a', 'https://site.example/b'],
    });
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    const redirect = await browser.get(authorize(client));
    await updateClient(t.database.db, { config: t.config, clock: t.clock }, client.clientId, {
      removeRedirectUris: ['https://site.example/a'],
    });
    const signedIn = await browser.signIn(user, String(redirect.headers.location));
    const res = await browser.get(String(signedIn.headers.location));
    expect(res.statusCode).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });
});
