import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { basic } from '../helpers/http.js';
import { submitAndWait } from './helpers/console-stage.js';
import {
  checkPortalPage,
  createAppInBrowser,
  type DevelopersStage,
  expectKeyboardReachable,
  openDevelopersStage,
} from './helpers/developers-stage.js';

/**
 * The developer portal as a site owner uses it in Chromium: create an application and read its
 * secret (shown once, copied with the button, and working at the token endpoint), a refused form
 * with its problems beside the fields, the application's page with a new secret for a rotation,
 * its log of refused requests (a redirect_uri with a trailing slash shown beside the registered one);
 * each page in English and Russian, at 390 px and on a desktop without sideways scrolling,
 * axe-clean in the light and the dark scheme, and every control reached by Tab alone. The tests
 * run in order.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

let stage: DevelopersStage;
let t: TestApp;
let base: string;
let page: Page;
let created: { clientId: string; secret: string };
/** Script errors and CSP refusals the pages caused: none expected. */
const pageErrors: string[] = [];

/** A client_credentials-free check that a secret authenticates: the token endpoint's answer to a wrong code. */
async function secretWorks(clientId: string, secret: string): Promise<boolean> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/oauth/token',
    headers: {
      authorization: basic({ clientId, clientSecret: secret, redirectUri: '' }),
      'content-type': 'application/x-www-form-urlencoded',
    },
    payload: 'grant_type=authorization_code&code=nothing&redirect_uri=https%3A%2F%2Flantern.example%2Fcb',
  });
  // A known client with a valid secret gets past authentication to the code: invalid_grant.
  return (res.json() as { error: string }).error === 'invalid_grant';
}

describe.skipIf(skipBrowserTests)('the developer portal, in Chromium', () => {
  beforeAll(async () => {
    stage = await openDevelopersStage();
    ({ t, base, page } = stage);
    await stage.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      // A refused form's 400 answer is logged as a failed load: that one is expected.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text());
    });
  }, 120_000);

  afterAll(async () => {
    await stage?.close();
  }, 60_000);

  it('lists no application yet, in English and Russian, by keyboard', async () => {
    expect(await page.locator('h1').textContent()).toBe('Your applications');
    await checkPortalPage(page, 'list', 'developers-list-en');
    await expectKeyboardReachable(page, 'list');
    await page.goto(`${base}/developers?lang=ru`);
    expect(await page.locator('h1').textContent()).toBe('Ваши приложения');
    await checkPortalPage(page, 'list ru');
    await page.goto(`${base}/developers?lang=en`);
  });

  it('refuses a form with problems beside the fields, then creates the application and shows its secret once', async () => {
    await submitAndWait(page, 'a[href="/developers/apps/new"]');
    await checkPortalPage(page, 'new', 'developers-new-en');
    await expectKeyboardReachable(page, 'new');
    await page.locator('#name').fill('Lantern Books');
    await page.locator('#siteUrl').fill('https://lantern.example');
    await page.locator('#redirectUris').fill('http://lantern.example/cb');
    await submitAndWait(page, 'form[action="/developers/apps"] button[type="submit"]');
    expect(await page.locator('#redirectUris-error').textContent()).toContain('must use https');
    expect(await page.locator('#redirectUris').getAttribute('aria-invalid')).toBe('true');
    await checkPortalPage(page, 'new refused');

    created = await createAppInBrowser(page, base, {
      name: 'Lantern Books',
      siteUrl: 'https://lantern.example',
      redirectUris: ['https://lantern.example/cb'],
    });
    expect(created.clientId).toMatch(/^pk_/);
    expect(created.secret).toMatch(/^sk_/);
    await checkPortalPage(page, 'created', 'developers-created-en');
    await expectKeyboardReachable(page, 'created');
    // The copy button puts the secret on the clipboard and says so.
    await page.locator('[data-copy]:has(#client-secret) [data-copy-button]').click();
    await expect.poll(() => page.locator('#client-secret-status').textContent()).toBe('Copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(created.secret);
    expect(await secretWorks(created.clientId, created.secret)).toBe(true);
    expect(await secretWorks(created.clientId, `${created.secret}x`)).toBe(false);
  });

  it("shows the application's page, adds a second secret for a rotation, both working", async () => {
    await submitAndWait(page, `a[href="/developers/apps/${created.clientId}"]`);
    expect(await page.locator('h1').textContent()).toBe('Lantern Books');
    expect(await page.locator('.app-status').textContent()).toBe('Awaiting approval');
    await checkPortalPage(page, 'app', 'developers-app-en');
    await expectKeyboardReachable(page, 'app');
    await submitAndWait(page, 'form[action$="/secrets"] button[type="submit"]');
    const second = await page.locator('#client-secret').inputValue();
    expect(second).toMatch(/^sk_/);
    expect(await secretWorks(created.clientId, created.secret)).toBe(true);
    expect(await secretWorks(created.clientId, second)).toBe(true);
    await checkPortalPage(page, 'secret added');

    await page.goto(`${base}/developers/apps/${created.clientId}?lang=ru`);
    expect(await page.locator('#secrets-heading').textContent()).toBe('Секреты клиента');
    await checkPortalPage(page, 'app ru', 'developers-app-ru');
    await page.goto(`${base}/developers?lang=en`);
  });

  it("reads a refused request in the application's log: a redirect_uri with a trailing slash, with both values", async () => {
    const authorize = new URL('/api/v1/oauth/authorize', base);
    for (const [name, value] of Object.entries({
      client_id: created.clientId,
      redirect_uri: 'https://lantern.example/cb/',
      response_type: 'code',
      scope: 'openid',
      state: 'st',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }))
      authorize.searchParams.set(name, value);
    const refused = await page.goto(authorize.href);
    expect(refused?.status()).toBe(400);
    const appPage = `${base}/developers/apps/${created.clientId}`;
    // The log is written once the answer is sent.
    await expect
      .poll(async () => {
        await page.goto(appPage);
        return page.locator('.near-miss').count();
      })
      .toBe(1);
    expect(await page.locator('.near-miss').textContent()).toBe(
      'Sent “https://lantern.example/cb/”, registered “https://lantern.example/cb”: they differ only by a trailing slash, and redirect URIs must match exactly.',
    );
    expect(await page.locator('.refusals code.differs').allTextContents()).toEqual([
      'https://lantern.example/cb/',
      'https://lantern.example/cb',
    ]);
    await checkPortalPage(page, 'refusals', 'developers-refusals-en');
    expect(pageErrors).toEqual([]);
  });
});
