import * as client from 'openid-client';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { createUser } from '../../src/modules/accounts/accounts.service.js';
import { latestAuditEvents } from '../../src/modules/audit/audit.repository.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { listPasskeys } from '../../src/modules/passkeys/passkeys.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/tcp-proxy.js';
import { launchChromium, type PageLog, recordPage } from './helpers/chromium.js';
import { inspectAndPhotograph, WIDTHS } from './helpers/page-checks.js';

/**
 * Passkeys in Chromium, with a virtual authenticator of the DevTools protocol
 * (a platform authenticator holding discoverable credentials, verifying the user): a passkey is
 * registered on the passkeys section, then signs in through a relying party (openid-client) with
 * "Sign in with a passkey", and through the username field's autofill; the id_token says how
 * (amr ["hwk","user","mfa"], acr "mfa"). An authenticator that does not verify the user is refused.
 *
 * PUBLIC_URL is http://localhost:<port>: WebAuthn needs a domain as RP ID (not an IP address) and a
 * secure context, which localhost is. Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1
 * skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

const person = {
  username: 'passkey_holder',
  password: 'a key that is not a password',
  email: 'holder@example.org',
};
const redirectUri = 'https://games.example/callback';

let t: TestApp;
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let log: PageLog;
let cdp: CDPSession;
let authenticatorId: string;
let userId: number;
let rp: client.Configuration;

/** Starts a sign-in at the relying party: openid-client's authorization URL, with PKCE and a nonce. */
async function startAtSite() {
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(rp, {
    redirect_uri: redirectUri,
    scope: 'openid profile',
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url, checks: { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce } };
}

/**
 * Follows a sign-in to the site's callback (caught on its way: the site does not run), allowing
 * the consent when asked, and lets openid-client redeem the code and validate the id_token.
 */
async function finishAtSite(
  checks: Awaited<ReturnType<typeof startAtSite>>['checks'],
  signIn: () => Promise<void>,
): Promise<client.IDToken> {
  let reached: (url: string) => void = () => undefined;
  const callback = new Promise<string>((resolve) => {
    reached = resolve;
  });
  await page.route(`${redirectUri}**`, async (route) => {
    reached(route.request().url());
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
  });
  await signIn();
  const allow = page.locator('button[value="allow"]');
  const arrived = await Promise.race([callback, allow.waitFor().then(() => null)]);
  if (arrived === null) await allow.click();
  const tokens = await client.authorizationCodeGrant(rp, new URL(await callback), checks);
  await page.unrouteAll();
  const claims = tokens.claims();
  if (!claims) throw new Error('no id_token');
  return claims;
}

async function withAutofill(on: boolean): Promise<void> {
  await page.goto(`${base}/assets/styles.css`);
  await page.evaluate((value) => {
    if (value) localStorage.removeItem('withoutAutofill');
    else localStorage.setItem('withoutAutofill', '1');
  }, on);
}

async function signOut(): Promise<void> {
  await page.goto(`${base}/account`);
  await Promise.all([
    page.waitForURL(`${base}/signin`),
    page.locator('form[action="/signout"] button').click(),
  ]);
}

describe.skipIf(skipBrowserTests)('passkeys, in Chromium with a virtual authenticator', () => {
  beforeAll(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    // The real clock: openid-client checks the id_token's times against this machine's.
    t = await createTestApp({ env: { PUBLIC_URL: base }, clock: systemClock });
    await t.app.listen({ host: 'localhost', port });
    const ctx = { config: t.config, clock: t.clock };
    userId = (await createUser(t.database.db, ctx, { ...person, emailVerified: true })).id;
    const created = await createClient(t.database.db, ctx, {
      name: 'Northwind Games',
      siteUrl: 'https://games.example',
      redirectUris: [redirectUri],
    });
    rp = await client.discovery(new URL(base), created.client_id, created.client_secret ?? '', undefined, {
      execute: [client.allowInsecureRequests],
    });
    browser = await launchChromium();
    context = await browser.newContext({ locale: 'en-GB', viewport: WIDTHS.desktop });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    log = recordPage(page);
    cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const added = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    authenticatorId = added.authenticatorId;
    // The virtual authenticator answers a conditional (autofill) request at once, as if the person
    // had picked the passkey in the username field's suggestions. To try the button alone, a test
    // makes the page see a browser without autofill.
    await page.addInitScript(() => {
      try {
        if (localStorage.getItem('withoutAutofill'))
          PublicKeyCredential.isConditionalMediationAvailable = async () => false;
      } catch {
        // A page without storage (the browser's own error page) has no passkey request either.
      }
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  }, 60_000);

  it('registers a passkey on the passkeys section', async () => {
    await page.goto(`${base}/signin?return_to=/account/security`);
    await page.locator('#username').fill(person.username);
    await page.locator('#password').fill(person.password);
    await Promise.all([
      page.waitForURL(`${base}/account/security`),
      page.locator('form[action="/signin"] button[type="submit"]').click(),
    ]);
    await page.locator('[data-passkey-add]').waitFor();
    await inspectAndPhotograph(page, 'passkeys-empty');
    await page.locator('#passkey-new-name').fill('Test laptop');
    await Promise.all([
      page.waitForURL(`${base}/account/security?notice=passkey_added`),
      page.locator('[data-passkey-add]').click(),
    ]);
    expect(await page.locator('.passkey h3').allTextContents()).toEqual(['Test laptop']);
    await inspectAndPhotograph(page, 'passkeys');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.isResidentCredential).toBe(true);
    expect(await listPasskeys(t.database.db, userId)).toMatchObject([{ name: 'Test laptop' }]);
  });

  it('signs in to a site with "Sign in with a passkey": amr hwk, user, mfa and acr mfa', async () => {
    await withAutofill(false);
    await signOut();
    const { url, checks } = await startAtSite();
    const claims = await finishAtSite(checks, async () => {
      await page.goto(url.href);
      expect(new URL(page.url()).pathname).toBe('/signin');
      await page.locator('[data-passkey-button]').waitFor();
      await inspectAndPhotograph(page, 'signin-passkey');
      await page.locator('[data-passkey-button]').click();
    });
    expect(claims.amr).toEqual(['hwk', 'user', 'mfa']);
    expect(claims.acr).toBe('mfa');
    expect(claims.sub).toBeTruthy();
  });

  it('signs in through the username field’s autofill (conditional mediation)', async () => {
    await withAutofill(false);
    await signOut();
    await withAutofill(true);
    const { url, checks } = await startAtSite();
    const claims = await finishAtSite(checks, async () => {
      // The page asks for a conditional request on load, which the virtual authenticator answers.
      await page.goto(url.href);
    });
    expect(claims.amr).toEqual(['hwk', 'user', 'mfa']);
  });

  it('refuses an authenticator that does not verify the user', async () => {
    await withAutofill(false);
    await signOut();
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    // Chromium itself refuses to answer a request that requires user verification without it; the
    // options are relaxed on their way to the page, so the assertion reaches the service unverified.
    await page.route(`${base}/signin/passkey/options`, async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      body.options.userVerification = 'discouraged';
      await route.fulfill({ response, json: body });
    });
    await page.goto(`${base}/signin`);
    await page.locator('[data-passkey-button]').click();
    const message = page.locator('[data-passkey-signin] [data-passkey-message]');
    // The authenticator signs without the UV flag; the service refuses the assertion.
    await expect.poll(() => message.textContent()).toMatch(/could not be checked/);
    const [event] = await latestAuditEvents(t.database.db, 1);
    expect(event).toMatchObject({ action: 'sign_in_failed', details: { via: 'passkey', reason: 'invalid' } });
    expect(new URL(page.url()).pathname).toBe('/signin');
    await page.unrouteAll();
    await page.goto(`${base}/account`);
    expect(new URL(page.url()).pathname).toBe('/signin');
    expect(log.pageErrors).toEqual([]);
  });
});
