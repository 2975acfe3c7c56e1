import * as client from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { AuthorizationCode } from 'simple-oauth2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliDatabase,
  parseJsonOutput,
  type RunningServer,
  runIdp,
  startServer,
  stopAllChildren,
} from '../helpers/cli.js';
import { usingPostgres } from '../helpers/database.js';
import { CallbackServer } from './helpers/callback-server.js';
import { launchChromium, type PageLog, recordPage } from './helpers/chromium.js';
import { FrontDoor } from './helpers/front-door.js';

/**
 * The whole sign-in as a third-party site lives it: the real server process (`node bin/server.js`,
 * on PGlite or on the PostgreSQL of TEST_DATABASE_URL), a user and clients registered with the real
 * CLI, Debian's Chromium filling the sign-in and consent forms, and two independent client
 * libraries, used as their documentation says, finishing the flow: openid-client (discovery, PKCE,
 * id_token validated against the JWKS, userinfo, refresh) and simple-oauth2 (HTTP Basic).
 *
 * One server, one browser, one context (its cookies are the user's session across the tests) and
 * one page for every navigation. The tests of this file run in order and build on each other.
 *
 * Chromium must be at /usr/bin/chromium (`apt-get install chromium`; .ci/run installs it). When it
 * is missing or does not start, these tests fail and say so. IDP_SKIP_BROWSER_TESTS=1 skips them,
 * for a machine that cannot have a browser.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

const FULL_SCOPE = 'openid profile email verified offline_access';

interface RegisteredClient {
  clientId: string;
  clientSecret: string;
}

const cleanup: Array<() => Promise<unknown>> = [];
let env: Record<string, string>;
let server: RunningServer;
let frontDoor: FrontDoor;
let callback: CallbackServer;
let browser: Browser;
let page: Page;
let log: PageLog;
/** PUBLIC_URL: the issuer, and the base URL every client and the browser use. */
let issuer: string;

const user = {
  username: 'alice_e2e',
  password: 'browser-e2e correct horse',
  email: 'alice.e2e@example.test',
  displayName: 'Alice in the Browser',
};
let userId: string;
/** The openid-client site (steps 1, 4, 4b, 5), the simple-oauth2 site (2) and the one the user denies (3). */
let shop: RegisteredClient;
let forum: RegisteredClient;
let stranger: RegisteredClient;
let shopConfig: client.Configuration;

async function idp(args: string[]): Promise<Record<string, unknown>> {
  return parseJsonOutput(await runIdp([...args, '--json'], { env }));
}

async function registerClient(name: string): Promise<RegisteredClient> {
  const created = await idp([
    'clients',
    'create',
    '--name',
    name,
    '--site-url',
    callback.origin,
    '--redirect-uri',
    callback.redirectUri,
  ]);
  expect(created.client_id).toMatch(/^pk_/);
  expect(created.client_secret).toMatch(/^sk_/);
  return { clientId: created.client_id as string, clientSecret: created.client_secret as string };
}

/** An openid-client Configuration for another client of the same provider (no second discovery). */
function configFor(registered: RegisteredClient): client.Configuration {
  const config = new client.Configuration(
    shopConfig.serverMetadata(),
    registered.clientId,
    registered.clientSecret,
  );
  client.allowInsecureRequests(config);
  return config;
}

/** A fresh authorization request by openid-client, with PKCE, state and nonce. */
async function authorizationRequest(
  config: client.Configuration,
  options: { scope: string; prompt?: string },
): Promise<{ url: URL; state: string; nonce: string; codeVerifier: string }> {
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const parameters: Record<string, string> = {
    redirect_uri: callback.redirectUri,
    scope: options.scope,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  };
  if (options.prompt) parameters.prompt = options.prompt;
  return { url: client.buildAuthorizationUrl(config, parameters), state, nonce, codeVerifier };
}

/** Waits for the consent page of `clientName` and returns whether it offers the e-mail checkbox. */
async function expectConsentPage(clientName: string): Promise<{ emailCheckbox: boolean }> {
  await page.locator('button[name="decision"][value="allow"]').waitFor({ state: 'visible' });
  expect(await page.locator('button[name="decision"][value="deny"]').isVisible()).toBe(true);
  expect(await page.locator('h1').textContent()).toContain(clientName);
  expect(await page.locator('main').textContent()).toContain(callback.origin); // the client's site
  expect(await page.locator('main').textContent()).toContain(`@${user.username}`);
  const checkbox = page.locator('input[type="checkbox"][name="share_email"][value="1"]');
  return { emailCheckbox: (await checkbox.count()) === 1 };
}

/**
 * Clicks Allow or Deny on the consent page and returns the URL the callback server received with
 * this `state`, once the browser shows the callback's answer.
 */
async function decide(decision: 'allow' | 'deny', state: string): Promise<URL> {
  const arrived = callback.waitFor(state);
  arrived.catch(() => undefined); // awaited below; a failing click must not leave it unhandled
  await page.locator(`button[name="decision"][value="${decision}"]`).click();
  const url = await arrived;
  await page.waitForURL(
    (current) => current.origin === callback.origin && current.searchParams.get('state') === state,
  );
  expect(await page.locator('body').textContent()).toBe('ok');
  return url;
}

async function getJson(url: string, accessToken: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${accessToken}` } });
  return { status: response.status, body: await response.json() };
}

function scopesOf(scope: string | undefined): string[] {
  return (scope ?? '').split(' ').filter(Boolean).sort();
}

describe.skipIf(skipBrowserTests)(
  `OAuth 2.0 / OIDC in Chromium with openid-client and simple-oauth2, on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`,
  () => {
    beforeAll(async () => {
      // The browser first: without one, nothing else is worth starting.
      browser = await launchChromium();
      cleanup.push(() => browser.close());
      const context = await browser.newContext();
      page = await context.newPage();
      page.setDefaultTimeout(15_000);
      log = recordPage(page);

      callback = await CallbackServer.start();
      cleanup.push(() => callback.close());
      frontDoor = await FrontDoor.open();
      cleanup.push(() => frontDoor.close());
      issuer = frontDoor.url;

      // A copy of the migrated template: the server has no initdb or migration to run first.
      const database = await cliDatabase('idp-browser-');
      cleanup.push(database.drop);
      env = database.env;
      Object.assign(env, { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', PUBLIC_URL: issuer });
      server = await startServer({ env });
      cleanup.push(() => server.stop());
      frontDoor.forwardTo(server.port);

      // On PGlite these go through the running server's control socket.
      const [created, ...clients] = await Promise.all([
        idp([
          'users',
          'create',
          '--username',
          user.username,
          '--password',
          user.password,
          '--email',
          user.email,
          '--email-verified',
          '--display-name',
          user.displayName,
          '--verification-level',
          '1',
        ]),
        registerClient('E2E Shop'),
        registerClient('E2E Forum'),
        registerClient('E2E Stranger'),
      ]);
      expect(created).toMatchObject({ username: user.username });
      userId = String(created.id);
      [shop, forum, stranger] = clients as [RegisteredClient, RegisteredClient, RegisteredClient];

      // openid-client, as its documentation shows; the issuer is plain http on loopback here.
      shopConfig = await client.discovery(new URL(issuer), shop.clientId, shop.clientSecret, undefined, {
        execute: [client.allowInsecureRequests],
      });
    }, 180_000);

    afterAll(async () => {
      for (const step of cleanup.reverse()) await step().catch((error: unknown) => console.error(error));
      await stopAllChildren();
    }, 60_000);

    it('1. openid-client: sign in and allow in the browser, code + PKCE, id_token, userinfo, refresh, /me', async () => {
      expect(shopConfig.serverMetadata().issuer).toBe(issuer);
      const request = await authorizationRequest(shopConfig, { scope: FULL_SCOPE });
      expect(request.url.href.startsWith(`${issuer}/api/v1/oauth/authorize?`)).toBe(true);

      // Not signed in yet: authorize sends the browser to the sign-in form.
      const signInPage = await page.goto(request.url.href);
      expect(signInPage?.status()).toBe(200);
      expect(new URL(page.url()).pathname).toBe('/signin');
      await page.locator('input[name="username"]').fill(user.username);
      await page.locator('input[name="password"]').fill(user.password);
      await page.locator('form[action="/signin"] button[type="submit"]').click();

      // Signed in: back into the request, on to the consent page, e-mail offered and ticked.
      const consent = await expectConsentPage('E2E Shop');
      expect(consent.emailCheckbox).toBe(true);
      expect(await page.locator('input[name="share_email"]').isChecked()).toBe(true);

      const callbackUrl = await decide('allow', request.state);
      expect(callbackUrl.searchParams.get('code')).toMatch(/^ac_/);
      expect(callbackUrl.searchParams.get('iss')).toBe(issuer);

      // The library checks state and iss, sends the PKCE verifier, and validates the id_token
      // (signature against the JWKS, iss, aud, exp, nonce, at_hash).
      const tokens = await client.authorizationCodeGrant(shopConfig, callbackUrl, {
        pkceCodeVerifier: request.codeVerifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
      });
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.access_token).toMatch(/^at_/);
      expect(tokens.refresh_token).toMatch(/^rt_/);
      expect(tokens.expires_in).toBeGreaterThan(0);
      expect(scopesOf(tokens.scope)).toEqual(scopesOf(FULL_SCOPE));

      const claims = tokens.claims();
      expect(claims).toMatchObject({
        iss: issuer,
        sub: userId,
        aud: shop.clientId,
        nonce: request.nonce,
        email: user.email,
        email_verified: true,
        preferred_username: user.username,
      });
      expect(typeof claims?.auth_time).toBe('number');

      const userinfo = await client.fetchUserInfo(shopConfig, tokens.access_token, userId);
      expect(userinfo).toMatchObject({
        sub: userId,
        preferred_username: user.username,
        username: user.username,
        name: user.displayName,
        email: user.email,
        email_verified: true,
        verification_level: 1,
      });

      const refreshed = await client.refreshTokenGrant(shopConfig, tokens.refresh_token as string);
      expect(refreshed.access_token).toMatch(/^at_/);
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      expect(refreshed.refresh_token).toMatch(/^rt_/);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

      const me = await getJson(`${issuer}/api/v1/me`, refreshed.access_token);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({
        ok: true,
        user: { sub: userId, preferred_username: user.username, email: user.email },
        sub: userId,
        preferred_username: user.username,
        email: user.email,
      });
    });

    it('2. simple-oauth2: a new client gets the consent page for the signed-in user; HTTP Basic token exchange; userinfo', async () => {
      const oauth2 = new AuthorizationCode({
        client: { id: forum.clientId, secret: forum.clientSecret },
        auth: {
          tokenHost: issuer,
          tokenPath: '/api/v1/oauth/token',
          authorizePath: '/api/v1/oauth/authorize',
        },
      });
      const state = client.randomState();
      const authorizationUrl = oauth2.authorizeURL({
        redirect_uri: callback.redirectUri,
        scope: 'openid profile',
        state,
      });

      // Still signed in from step 1: no sign-in form, straight to this client's consent page.
      await page.goto(authorizationUrl);
      expect(new URL(page.url()).pathname).toBe('/api/v1/oauth/authorize');
      const consent = await expectConsentPage('E2E Forum');
      expect(consent.emailCheckbox).toBe(false); // e-mail was not asked for

      const callbackUrl = await decide('allow', state);
      expect(callbackUrl.searchParams.get('iss')).toBe(issuer);
      const code = callbackUrl.searchParams.get('code');
      expect(code).toMatch(/^ac_/);

      const accessToken = await oauth2.getToken({
        code: code as string,
        redirect_uri: callback.redirectUri,
        scope: 'openid profile',
      });
      const token = accessToken.token as Record<string, unknown>;
      expect(token).toMatchObject({ token_type: 'Bearer', scope: 'openid profile' });
      expect(token.access_token).toMatch(/^at_/);
      expect(typeof token.id_token).toBe('string');
      expect(token.refresh_token).toBeUndefined(); // no offline_access

      const userinfo = await getJson(`${issuer}/api/v1/oauth/userinfo`, token.access_token as string);
      expect(userinfo.status).toBe(200);
      expect(userinfo.body).toMatchObject({
        sub: userId,
        preferred_username: user.username,
        name: user.displayName,
        display_name: user.displayName,
      });
      expect(userinfo.body).not.toHaveProperty('email');
      expect(userinfo.body).not.toHaveProperty('verification_level'); // `verified` not granted
    });

    it('3. Deny: the callback gets error=access_denied with the same state and iss; openid-client reports it', async () => {
      const strangerConfig = configFor(stranger);
      const request = await authorizationRequest(strangerConfig, { scope: 'openid profile email' });
      await page.goto(request.url.href);
      await expectConsentPage('E2E Stranger');

      const callbackUrl = await decide('deny', request.state);
      expect(callbackUrl.searchParams.get('error')).toBe('access_denied');
      expect(callbackUrl.searchParams.get('state')).toBe(request.state);
      expect(callbackUrl.searchParams.get('iss')).toBe(issuer);
      expect(callbackUrl.searchParams.get('code')).toBeNull();

      await expect(
        client.authorizationCodeGrant(strangerConfig, callbackUrl, {
          pkceCodeVerifier: request.codeVerifier,
          expectedState: request.state,
          expectedNonce: request.nonce,
        }),
      ).rejects.toMatchObject({ error: 'access_denied' });
    });

    it('4. Remembered consent: the same client for fewer scopes goes straight back with a code; prompt=consent asks again', async () => {
      const request = await authorizationRequest(shopConfig, { scope: 'openid profile' });
      const firstDocument = log.documents.length;
      const arrived = callback.waitFor(request.state);
      const landed = await page.goto(request.url.href);
      const callbackUrl = await arrived;

      // The browser went authorize → (redirect) → callback, and never rendered a page in between.
      expect(landed?.url()).toBe(callbackUrl.href);
      const hops = log.documents.slice(firstDocument).map((hop) => ({
        at: `${new URL(hop.url).origin}${new URL(hop.url).pathname}`,
        redirect: hop.status >= 300 && hop.status < 400,
      }));
      expect(hops).toEqual([
        { at: `${issuer}/api/v1/oauth/authorize`, redirect: true },
        { at: callback.redirectUri, redirect: false },
      ]);
      expect(await page.locator('button[name="decision"]').count()).toBe(0);

      const tokens = await client.authorizationCodeGrant(shopConfig, callbackUrl, {
        pkceCodeVerifier: request.codeVerifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
      });
      expect(scopesOf(tokens.scope)).toEqual(['openid', 'profile']);
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.claims()).toMatchObject({ sub: userId, nonce: request.nonce });
      expect(tokens.claims()).not.toHaveProperty('email');

      // prompt=consent: the consent page comes back although the consent covers the request.
      const again = await authorizationRequest(shopConfig, { scope: 'openid profile', prompt: 'consent' });
      await page.goto(again.url.href);
      await expectConsentPage('E2E Shop');
      const allowed = await decide('allow', again.state);
      const more = await client.authorizationCodeGrant(shopConfig, allowed, {
        pkceCodeVerifier: again.codeVerifier,
        expectedState: again.state,
        expectedNonce: again.nonce,
      });
      expect(scopesOf(more.scope)).toEqual(['openid', 'profile']);
    });

    it('4b. prompt=login: a signed-in user gets the sign-in form again, then the remembered consent applies', async () => {
      const request = await authorizationRequest(shopConfig, { scope: 'openid profile', prompt: 'login' });
      await page.goto(request.url.href);
      expect(new URL(page.url()).pathname).toBe('/signin');
      await page.locator('input[name="username"]').fill(user.username);
      await page.locator('input[name="password"]').fill(user.password);
      const arrived = callback.waitFor(request.state);
      arrived.catch(() => undefined);
      await page.locator('form[action="/signin"] button[type="submit"]').click();
      const callbackUrl = await arrived;
      await page.waitForURL((current) => current.origin === callback.origin);

      const tokens = await client.authorizationCodeGrant(shopConfig, callbackUrl, {
        pkceCodeVerifier: request.codeVerifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
      });
      expect(scopesOf(tokens.scope)).toEqual(['openid', 'profile']);
      expect(tokens.claims()).toMatchObject({ sub: userId, nonce: request.nonce });
    });

    it('5. Unticked e-mail: email is dropped from the granted scope, the id_token, userinfo and /me', async () => {
      const request = await authorizationRequest(shopConfig, { scope: FULL_SCOPE, prompt: 'consent' });
      await page.goto(request.url.href);
      const consent = await expectConsentPage('E2E Shop');
      expect(consent.emailCheckbox).toBe(true);
      await page.locator('input[name="share_email"]').uncheck();
      expect(await page.locator('input[name="share_email"]').isChecked()).toBe(false);

      const callbackUrl = await decide('allow', request.state);
      const tokens = await client.authorizationCodeGrant(shopConfig, callbackUrl, {
        pkceCodeVerifier: request.codeVerifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
      });
      expect(scopesOf(tokens.scope)).toEqual(['offline_access', 'openid', 'profile', 'verified']);

      const claims = tokens.claims();
      expect(claims).toMatchObject({ sub: userId, nonce: request.nonce, preferred_username: user.username });
      expect(claims).not.toHaveProperty('email');
      expect(claims).not.toHaveProperty('email_verified');

      const userinfo = await client.fetchUserInfo(shopConfig, tokens.access_token, userId);
      expect(userinfo).toMatchObject({
        sub: userId,
        preferred_username: user.username,
        verification_level: 1,
      });
      expect(userinfo).not.toHaveProperty('email');
      expect(userinfo).not.toHaveProperty('email_verified');

      const me = await getJson(`${issuer}/api/v1/me`, tokens.access_token);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ ok: true, sub: userId, user: { sub: userId } });
      const body = me.body as { user: Record<string, unknown> };
      for (const payload of [body, body.user]) {
        expect(payload).not.toHaveProperty('email');
        expect(payload).not.toHaveProperty('email_verified');
      }

      // Refreshing cannot bring the e-mail back.
      const refreshed = await client.refreshTokenGrant(shopConfig, tokens.refresh_token as string);
      expect(scopesOf(refreshed.scope)).not.toContain('email');
      const after = await client.fetchUserInfo(shopConfig, refreshed.access_token, userId);
      expect(after).not.toHaveProperty('email');

      // The withheld e-mail is not remembered as allowed: asking for it again shows the page again.
      const askAgain = await authorizationRequest(shopConfig, { scope: FULL_SCOPE });
      await page.goto(askAgain.url.href);
      await expectConsentPage('E2E Shop');
      const denied = await decide('deny', askAgain.state);
      expect(denied.searchParams.get('error')).toBe('access_denied');
    });

    it("5b. Logout: the confirmation page's form leads to the site's post_logout_redirect_uri (its origin in form-action)", async () => {
      const created = await idp([
        'clients',
        'create',
        '--name',
        'E2E Logout',
        '--site-url',
        callback.origin,
        '--redirect-uri',
        callback.redirectUri,
        '--post-logout-redirect-uri',
        callback.redirectUri,
      ]);
      const state = 'signed-out-5b';
      const end = new URL(`${issuer}/api/v1/oauth/logout`);
      end.search = new URLSearchParams({
        client_id: created.client_id as string,
        post_logout_redirect_uri: callback.redirectUri,
        state,
      }).toString();
      // No id_token_hint: the user confirms on the page, whose POST is answered with a 303 to the site.
      const confirmation = await page.goto(end.href);
      expect(confirmation?.headers()['content-security-policy']).toContain(
        `form-action 'self' ${callback.origin};`,
      );
      const arrived = callback.waitFor(state);
      arrived.catch(() => undefined);
      await page.locator('button[name="decision"][value="signout"]').click();
      expect((await arrived).searchParams.get('state')).toBe(state);
      await page.waitForURL((current) => current.origin === callback.origin);
    });

    it('6. The pages made no request off 127.0.0.1, and logged no console error', () => {
      expect(log.documents.length).toBeGreaterThan(0); // the steps above ran in this page
      const origins = new Set(log.requests.map((url) => new URL(url).origin));
      expect([...origins].sort()).toEqual([callback.origin, issuer].sort());
      for (const url of log.requests) expect(new URL(url).hostname).toBe('127.0.0.1');
      // The stylesheet loaded from the service itself (the CSP allows only 'self').
      expect(log.requests.some((url) => url.startsWith(`${issuer}/assets/styles.css`))).toBe(true);
      expect(log.consoleErrors).toEqual([]);
      expect(log.pageErrors).toEqual([]);
      expect(log.failedRequests).toEqual([]);
    });

    it('7. The server logged no error along the way', () => {
      const errors = server
        .output()
        .stdout.split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level?: number; msg?: string })
        .filter((entry) => (entry.level ?? 0) >= 50);
      expect(errors).toEqual([]);
      expect(server.output().stderr).toBe('');
    });
  },
);
