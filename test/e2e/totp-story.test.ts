import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { totpCodeAt } from '../../src/modules/mfa/totp-code.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser, type TestUser } from '../helpers/factories.js';
import { freePort } from '../helpers/tcp-proxy.js';
import { CallbackServer } from './helpers/callback-server.js';
import { launchChromium } from './helpers/chromium.js';
import { inspectAndPhotograph, WIDTHS } from './helpers/page-checks.js';

/**
 * Two-step sign-in as a person lives it, in Chromium, with openid-client as the
 * relying party: TOTP set up from the key the page shows, then sign-ins to the site with a code and
 * with a recovery code (`amr` ["pwd","otp","mfa"], `acr` "mfa"), that recovery code refused a second
 * time, and a site's `acr_values=mfa` leading an account without a second factor through setting
 * one up. The security page and the second step are checked with axe-core and photographed into
 * docs/screenshots/ (English, phone and desktop). The tests run in order and build on each other.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';
const STEP_MS = 30_000;

let t: TestApp;
let base: string;
let callback: CallbackServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let config: oidc.Configuration;
let person: TestUser;
let key = '';
let recoveryCodes: string[] = [];

/** The code the person's app shows now; the clock then moves on a step, as a second code would. */
function nextCode(secret: string): string {
  t.clock.advance(STEP_MS);
  return totpCodeAt(secret, t.clock.now());
}

async function submit(selector: string): Promise<void> {
  await Promise.all([page.waitForEvent('load'), page.locator(selector).click()]);
}

async function signOut(): Promise<void> {
  await context.clearCookies();
}

/** Starts a sign-in at the site (openid-client builds the request, PKCE, state, nonce). */
async function startAtSite(extra: Record<string, string> = {}) {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: callback.redirectUri,
    scope: 'openid profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  await page.goto(url.href);
  return { codeVerifier, state, nonce };
}

/** Allows the site when asked, and lets openid-client finish: the validated id_token's claims. */
async function finishAtSite(request: { codeVerifier: string; state: string; nonce: string }) {
  const arrived = callback.waitFor(request.state);
  arrived.catch(() => undefined);
  // The consent page the first time; once allowed, the site is answered at once.
  const allow = page.locator('button[name="decision"][value="allow"]');
  if (await allow.count()) await allow.click();
  const tokens = await oidc.authorizationCodeGrant(config, await arrived, {
    pkceCodeVerifier: request.codeVerifier,
    expectedState: request.state,
    expectedNonce: request.nonce,
  });
  return tokens.claims();
}

async function passwordStep(who: TestUser): Promise<void> {
  await page.locator('#username').fill(who.username);
  await page.locator('#password').fill(who.password);
  await submit('form[action="/signin"] button[type="submit"]');
}

describe.skipIf(skipBrowserTests)('two-step sign-in, in Chromium, with openid-client', () => {
  beforeAll(async () => {
    callback = await CallbackServer.start();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { PUBLIC_URL: base } });
    // Tokens are checked by openid-client against the real time: the service's clock starts a little
    // before it and moves on only by the steps of the codes.
    t.clock.set(new Date(Date.now() - 10 * 60 * 1000));
    await t.app.listen({ host: '127.0.0.1', port });
    const ctx = { config: t.config, clock: t.clock };
    const created = await createClient(t.database.db, ctx, {
      name: 'Northwind Games',
      siteUrl: callback.origin,
      redirectUris: [callback.redirectUri],
    });
    config = await oidc.discovery(new URL(base), created.client_id, created.client_secret ?? '', undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    person = await makeUser(t, { username: 'two_steps', password: 'one step at a time, then two' });
    browser = await launchChromium();
    context = await browser.newContext({ locale: 'en-GB', viewport: WIDTHS.desktop });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
    await callback?.close();
  }, 60_000);

  it('sets up an authenticator app from the key the page shows, and gets 10 recovery codes once', async () => {
    await page.goto(`${base}/signin`);
    await passwordStep(person);
    expect(new URL(page.url()).pathname).toBe('/account');
    await submit('a[href="/account/security"]');
    await submit('form[action="/account/security/totp"] button');
    expect(await page.locator('svg.qr').isVisible()).toBe(true);
    key = ((await page.locator('.totp-key').textContent()) ?? '').replaceAll(' ', '');
    expect(key).toMatch(/^[A-Z2-7]{32}$/);
    await inspectAndPhotograph(page, 'security');
    await page.locator('#totp-code').fill(nextCode(key));
    await submit('form[action="/account/security/totp/confirm"] button');
    recoveryCodes = await page.locator('.recovery-codes code').allTextContents();
    expect(recoveryCodes).toHaveLength(10);
    expect(await page.locator('.totp-key').count()).toBe(0);
    // Minutes later the security page first asks the person to confirm it is them (sudo mode):
    // a code from the app will do.
    t.clock.advance((t.config.REAUTH_MAX_AGE_SECONDS + 1) * 1000);
    await page.goto(`${base}/account/security`);
    expect(new URL(page.url()).pathname).toBe('/account/reauthenticate');
    await inspectAndPhotograph(page, 'reauthenticate');
    await page.locator('#code').fill(nextCode(key));
    await submit('form[action="/account/reauthenticate"] button:has-text("code")');
    expect(new URL(page.url()).pathname).toBe('/account/security');
    expect(await page.locator('.recovery-codes').count()).toBe(0);
    expect(await page.locator('main').textContent()).toContain('10 unused recovery codes left.');
  });

  it('signs in to the site with a code: amr ["pwd","otp","mfa"], acr "mfa"', async () => {
    await signOut();
    const request = await startAtSite();
    await passwordStep(person);
    expect(new URL(page.url()).pathname).toBe('/signin/second-factor');
    await inspectAndPhotograph(page, 'second-factor');
    await page.locator('#code').fill(nextCode(key));
    await submit('form[action="/signin/second-factor"] button[type="submit"]');
    const claims = await finishAtSite(request);
    expect(claims?.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims?.acr).toBe('mfa');
  });

  it('signs in with a recovery code, which is then refused a second time', async () => {
    await signOut();
    const request = await startAtSite();
    await passwordStep(person);
    await page.locator('#code').fill(recoveryCodes[0] as string);
    await submit('form[action="/signin/second-factor"] button[type="submit"]');
    const claims = await finishAtSite(request);
    expect(claims?.amr).toEqual(['pwd', 'otp', 'mfa']);

    await signOut();
    await startAtSite();
    await passwordStep(person);
    await page.locator('#code').fill(recoveryCodes[0] as string);
    await submit('form[action="/signin/second-factor"] button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe('/signin/second-factor');
    expect(await page.locator('[role="alert"]').textContent()).toContain('already used');
  });

  it('acr_values=mfa leads an account without a second factor through setting one up, then on to the site', async () => {
    await signOut();
    const other = await makeUser(t, { username: 'one_step', password: 'just a password so far' });
    await page.goto(`${base}/signin`);
    await passwordStep(other);
    const request = await startAtSite({ acr_values: 'mfa' });
    expect(new URL(page.url()).pathname).toBe('/account/security');
    expect(await page.locator('main').textContent()).toContain('asks for a second factor');
    await submit('form[action="/account/security/totp"] button');
    const otherKey = ((await page.locator('.totp-key').textContent()) ?? '').replaceAll(' ', '');
    await page.locator('#totp-code').fill(nextCode(otherKey));
    await submit('form[action="/account/security/totp/confirm"] button');
    expect(await page.locator('.recovery-codes code').count()).toBe(10);
    await page.locator('a.button.primary').click();
    const claims = await finishAtSite(request);
    expect(claims?.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims?.acr).toBe('mfa');
  });
});
