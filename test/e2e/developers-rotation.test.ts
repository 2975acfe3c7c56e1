import * as oidc from 'openid-client';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { makeUser, type TestUser } from '../helpers/factories.js';
import { CallbackServer } from './helpers/callback-server.js';
import { submitAndWait } from './helpers/console-stage.js';
import { createAppInBrowser, type DevelopersStage, openDevelopersStage } from './helpers/developers-stage.js';
import { seriousFindings } from './helpers/page-checks.js';

/**
 * A rotation of a secret in the developer portal, from the start, in Chromium, with openid-client as the site:
 * the owner creates a confidential application whose redirect URI is a loopback callback this test
 * serves; openid-client (discovery, the secret read from the page) signs another person in through
 * the pages (CLIENT_REGISTRATION=open: the consent page marks the application as not reviewed,
 * axe-clean), gets tokens and userinfo. Then, while the site refreshes its tokens every ~50 ms
 * with client authentication, the owner adds a second secret (re-authenticating first, as the
 * portal asks once the sign-in is older than REAUTH_MAX_AGE_SECONDS), the site switches to it,
 * and the owner expires the old one now: no request fails during the overlap, the old secret is
 * refused afterwards (401 invalid_client) and the new one works, and the application's log of
 * refused requests names that refusal with its reason.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

let stage: DevelopersStage;
let t: TestApp;
let base: string;
/** The owner's page (signed in to the portal by the stage). */
let page: Page;
/** The browser of the person who signs in to the site: the same Chromium, a profile of its own. */
let visitorContext: BrowserContext;
let visitorPage: Page;
let visitor: TestUser;
let callback: CallbackServer;
let app: { clientId: string; secret: string };
let server: oidc.ServerMetadata;
let refreshToken: string;
let newSecret: string;

/** openid-client's configuration of the application with one of its secrets (HTTP Basic, RFC 6749 §2.3.1). */
function siteWith(secret: string): oidc.Configuration {
  const config = new oidc.Configuration(server, app.clientId, undefined, oidc.ClientSecretBasic(secret));
  oidc.allowInsecureRequests(config);
  return config;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(skipBrowserTests)('a secret rotated in the developer portal while the site runs', () => {
  beforeAll(async () => {
    // Open: anyone may sign in through the new application, which is then marked as not reviewed.
    stage = await openDevelopersStage({ env: { CLIENT_REGISTRATION: 'open' } });
    ({ t, base, page } = stage);
    callback = await CallbackServer.start();
    visitor = await makeUser(t, { username: 'site_visitor' });
    visitorContext = await stage.browser.newContext({ locale: 'en-GB' });
    visitorPage = await visitorContext.newPage();
    visitorPage.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await visitorContext?.close().catch(() => undefined);
    await callback?.close();
    await stage?.close();
  }, 60_000);

  it('creates a confidential application in the portal and signs a person in through it with openid-client', async () => {
    app = await createAppInBrowser(page, base, {
      name: 'Loopback Site',
      siteUrl: callback.origin,
      redirectUris: [callback.redirectUri],
    });
    expect(app.clientId).toMatch(/^pk_/);
    expect(app.secret).toMatch(/^sk_/);

    const discovered = await oidc.discovery(
      new URL(base),
      app.clientId,
      undefined,
      oidc.ClientSecretBasic(app.secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    server = discovered.serverMetadata();
    expect(server.issuer).toBe(base);

    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(discovered, {
      redirect_uri: callback.redirectUri,
      scope: 'openid profile email offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    await visitorPage.goto(url.href);
    expect(new URL(visitorPage.url()).pathname).toBe('/signin');
    await visitorPage.locator('#username').fill(visitor.username);
    await visitorPage.locator('#password').fill(visitor.password);
    await visitorPage.locator('form[action="/signin"] button[type="submit"]').click();
    await visitorPage.locator('button[name="decision"][value="allow"]').waitFor({ state: 'visible' });
    expect(await visitorPage.locator('h1').textContent()).toContain('Loopback Site');
    expect(await visitorPage.locator('.warning[role="note"]').textContent()).toContain('Not reviewed');
    // The mark is new on this page: axe-clean with it, light and dark.
    expect(await seriousFindings(visitorPage)).toEqual([]);
    const arrived = callback.waitFor(state);
    arrived.catch(() => undefined); // awaited below; a failing click must not leave it unhandled
    await visitorPage.locator('button[name="decision"][value="allow"]').click();
    const callbackUrl = await arrived;

    const tokens = await oidc.authorizationCodeGrant(discovered, callbackUrl, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    expect(tokens.claims()).toMatchObject({ sub: String(visitor.id), aud: app.clientId, iss: base });
    expect(tokens.refresh_token).toMatch(/^rt_/);
    refreshToken = tokens.refresh_token as string;
    const profile = await oidc.fetchUserInfo(discovered, tokens.access_token, String(visitor.id));
    expect(profile).toMatchObject({
      preferred_username: visitor.username,
      email: `${visitor.username}@example.com`,
    });

    // The owner's page says the application signs people in but was not reviewed.
    await page.goto(`${base}/developers/apps/${app.clientId}`);
    expect(await page.locator('.app-status').textContent()).toBe('Not reviewed');
  });

  it('rotates the secret in the portal while the site refreshes tokens, with no failed request', async () => {
    let secretInUse = app.secret;
    const answered = { old: 0, new: 0 };
    const failures: string[] = [];
    let running = true;
    // The site: a refresh_token grant about every 50 ms, each answer counted, the rotated refresh
    // token kept (RFC 6749 §6), with whichever secret it is configured with at that moment.
    const site = (async () => {
      while (running) {
        const secret = secretInUse;
        try {
          const refreshed = await oidc.refreshTokenGrant(siteWith(secret), refreshToken);
          refreshToken = refreshed.refresh_token as string;
          answered[secret === app.secret ? 'old' : 'new'] += 1;
        } catch (error) {
          failures.push(`${secret === app.secret ? 'old' : 'new'} secret: ${String(error)}`);
        }
        await sleep(50);
      }
    })();
    const total = () => answered.old + answered.new + failures.length;
    const afterMore = async (count: number) => {
      const target = total() + count;
      await expect.poll(total, { timeout: 15_000, interval: 20 }).toBeGreaterThanOrEqual(target);
    };

    try {
      await afterMore(5);
      // The owner's sign-in is older than REAUTH_MAX_AGE_SECONDS now: adding a secret first asks
      // for the password again, then brings the owner back to the application's page.
      t.clock.set(new Date(t.clock.now().getTime() + (t.config.REAUTH_MAX_AGE_SECONDS + 60) * 1000));
      const appPage = `${base}/developers/apps/${app.clientId}`;
      await page.goto(appPage);
      await submitAndWait(page, 'form[action$="/secrets"] button[type="submit"]');
      expect(new URL(page.url()).pathname).toBe('/account/reauthenticate');
      await page.locator('#password').fill(stage.user.password);
      await submitAndWait(page, 'form[action="/account/reauthenticate"] button[type="submit"]');
      expect(page.url()).toBe(appPage);
      await submitAndWait(page, 'form[action$="/secrets"] button[type="submit"]');
      newSecret = await page.locator('#client-secret').inputValue();
      expect(newSecret).toMatch(/^sk_/);
      expect(newSecret).not.toBe(app.secret);

      // The site deploys the new secret; both work meanwhile.
      await afterMore(3);
      secretInUse = newSecret;
      await afterMore(5);

      // The owner expires the old secret now, by its last four characters in the list.
      await page.goto(appPage);
      const oldRow = page.locator('.developers-table tbody tr', {
        has: page.locator('code', { hasText: `…${app.secret.slice(-4)}` }),
      });
      await oldRow.locator('select[name="in"]').selectOption('0');
      await Promise.all([page.waitForEvent('load'), oldRow.locator('button[type="submit"]').click()]);
      expect(new URL(page.url()).searchParams.get('done')).toBe('secret_expired');
      expect(await page.locator('.notice[role="status"]').textContent()).toBe('The secret’s expiry was set.');
      expect(await page.locator(`code:text-is("…${app.secret.slice(-4)}")`).count()).toBe(0);
      expect(await page.locator(`code:text-is("…${newSecret.slice(-4)}")`).count()).toBe(1);
      await afterMore(5);
    } finally {
      running = false;
      await site;
    }
    expect(failures).toEqual([]);
    expect(answered.old).toBeGreaterThanOrEqual(8);
    expect(answered.new).toBeGreaterThanOrEqual(10);
  });

  it('refuses the old secret (401 invalid_client) and accepts the new one', async () => {
    const refused = await oidc.refreshTokenGrant(siteWith(app.secret), refreshToken).then(
      () => undefined,
      (error: unknown) => error,
    );
    // RFC 6749 §5.2: a client that authenticated with HTTP Basic gets 401 with its challenge.
    expect(refused).toBeInstanceOf(oidc.WWWAuthenticateChallengeError);
    const answer = (refused as oidc.WWWAuthenticateChallengeError).response;
    expect(answer.status).toBe(401);
    expect(((await answer.json()) as { error: string }).error).toBe('invalid_client');
    // The refused request consumed nothing: the same refresh token works with the new secret.
    const refreshed = await oidc.refreshTokenGrant(siteWith(newSecret), refreshToken);
    expect(refreshed.access_token).toMatch(/^at_/);
    refreshToken = refreshed.refresh_token as string;
  });

  it("shows the old secret's refusal in the application's log of refused requests, with its reason", async () => {
    const appPage = `${base}/developers/apps/${app.clientId}`;
    const row = page.locator('.refusals tbody tr', { has: page.locator('code:text-is("invalid_client")') });
    // The log is written once the answer is sent.
    await expect
      .poll(async () => {
        await page.goto(appPage);
        return row.count();
      })
      .toBe(1);
    const cells = await row.locator('td').allTextContents();
    expect(cells[1]).toBe('token');
    expect(cells[3]).toBe(
      'The client secret is wrong, expired or revoked (a public client sends none): use an active secret of this application.',
    );
    expect(cells[4]).toContain('client_authentication');
    expect(cells[4]).toContain('client_secret_basic');
    expect(cells[4]).toContain('refresh_token');
    // Never the secret itself.
    expect(await page.locator('.refusals').textContent()).not.toContain(app.secret);
    // Only that refusal: nothing failed during the rotation.
    expect(await page.locator('.refusals tbody tr').count()).toBe(1);
  });
});
