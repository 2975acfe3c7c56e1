import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';
import { createUser } from '../../src/modules/accounts/accounts.service.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import type { Locale } from '../../src/web/i18n/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, type PageLog, recordPage } from './helpers/chromium.js';
import { describeViolations, runAxe, saveScreenshot, WIDTHS } from './helpers/page-checks.js';

/**
 * What a browser meets first, in Chromium, in both languages, at 360 px and 1280 px: the landing
 * page, the 404 page of an unknown path, and the sign-in and consent pages of an app with a logo,
 * all under a branded service (BRAND_NAME, BRAND_LOGO_URL, BRAND_ACCENT_COLOR). Each page is in its
 * language, does not scroll sideways, has no serious axe finding in either color scheme, loads its
 * images under its real CSP, and is photographed into docs/screenshots/.
 *
 * The app's logo is served over http from 127.0.0.1 (a loopback logo URI is allowed for development),
 * so the image really loads and the page's CSP must admit its origin.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

const BROWSER_LOCALES: Record<Locale, string> = { en: 'en-GB', ru: 'ru-RU' };
const BRAND = 'Northwind ID';
/** #0b5d1e: 7.6:1 on white, so the start-up check admits it. */
const ACCENT_RGB = 'rgb(11, 93, 30)';
const user = { username: 'alice', password: 'correct horse battery' };
const redirectUri = 'https://games.example/callback';

let t: TestApp;
let base: string;
let browser: Browser;
let logoServer: http.Server;
let logoOrigin: string;
let clientId: string;
const contexts: BrowserContext[] = [];

/** Language, no sideways scroll and no serious axe finding at both widths; a screenshot at each. */
async function checkAndPhotograph(page: Page, name: string, locale: Locale, heading: RegExp): Promise<void> {
  expect(await page.locator('html').getAttribute('lang'), name).toBe(locale);
  expect((await page.locator('h1').textContent())?.trim(), name).toMatch(heading);
  for (const [width, size] of Object.entries(WIDTHS)) {
    const label = `${name} (${locale}, ${width})`;
    await page.setViewportSize(size);
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth, `${label}: scrollWidth`).toBeLessThanOrEqual(size.width);
    for (const colorScheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme });
      const serious = (await runAxe(page)).filter((v) => ['serious', 'critical'].includes(v.impact ?? ''));
      expect(describeViolations(serious), `${label}, ${colorScheme}: axe`).toEqual([]);
    }
    await saveScreenshot(page, `${name}-${locale}-${width}`, { fullPage: true });
  }
}

/** The rendered size of an image, and whether it loaded. */
function imageOf(page: Page, selector: string) {
  return page.locator(selector).evaluate((element) => {
    const image = element as HTMLImageElement;
    const box = image.getBoundingClientRect();
    return {
      loaded: image.complete && image.naturalWidth > 0,
      width: box.width,
      height: box.height,
      alt: image.alt,
    };
  });
}

async function visit(locale: Locale): Promise<PageLog> {
  const context = await browser.newContext({ locale: BROWSER_LOCALES[locale], viewport: WIDTHS.phone });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const log = recordPage(page);

  // The landing page: the brand, the ways in, the status, the developers' links.
  const home = await page.goto(`${base}/`);
  expect(home?.status()).toBe(200);
  await page.emulateMedia({ colorScheme: 'light' });
  expect(await imageOf(page, '.brand-logo')).toMatchObject({ loaded: true, width: 28, height: 28 });
  expect(await page.locator('.button.primary').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(
    ACCENT_RGB,
  );
  for (const href of ['/signin?return_to=/account', '/account', '/api/v1/docs', '/api/v1/platform/status'])
    expect(await page.locator(`main a[href="${href}"]`).count(), href).toBe(1);
  expect(await page.locator('.status-summary').textContent()).toMatch(
    locale === 'en' ? /All systems operational/ : /Все системы работают/,
  );
  await checkAndPhotograph(page, 'home', locale, new RegExp(`^${BRAND}$`));

  // A path no route serves: the 404 page, with its way home.
  const missing = await page.goto(`${base}/no/such/page`);
  expect(missing?.status()).toBe(404);
  expect(await page.locator('main a[href="/"]').count()).toBe(1);
  await checkAndPhotograph(
    page,
    'not-found',
    locale,
    locale === 'en' ? /^Not found$/ : /^Страница не найдена$/,
  );

  // An app's authorization request: the sign-in page names it and shows its logo.
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid profile',
    state: 'landing',
  });
  await page.goto(`${base}/api/v1/oauth/authorize?${query}`);
  await page.waitForURL(/\/signin\?request=/);
  const appName = 'Northwind Games';
  expect(await page.locator('.continue-to').textContent()).toBe(
    locale === 'en' ? `to continue to ${appName}` : `чтобы продолжить в «${appName}»`,
  );
  expect(await imageOf(page, 'img.client-logo')).toEqual({
    loaded: true,
    width: 64,
    height: 64,
    alt: locale === 'en' ? `Logo of ${appName}` : `Логотип «${appName}»`,
  });
  await checkAndPhotograph(page, 'signin-app', locale, locale === 'en' ? /^Sign in$/ : /^Вход$/);

  // Signed in, the consent page shows the logo too.
  await page.locator('#username').fill(user.username);
  await page.locator('#password').fill(user.password);
  await Promise.all([
    page.waitForURL(/\/api\/v1\/oauth\/authorize\/resume/),
    page.locator('form[action="/signin"] button[type="submit"]').click(),
  ]);
  expect(await imageOf(page, 'img.client-logo')).toMatchObject({ loaded: true, width: 64, height: 64 });
  await checkAndPhotograph(
    page,
    'consent-app',
    locale,
    locale === 'en' ? /^Allow Northwind Games to use/ : /^Разрешить «Northwind Games» доступ/,
  );
  return log;
}

describe.skipIf(skipBrowserTests)('the landing, 404 and app pages in Chromium, branded', () => {
  beforeAll(async () => {
    const png = readFileSync(path.join(projectRoot, 'public', 'default-avatar.png'));
    logoServer = http.createServer((_request, response) => {
      response.writeHead(200, {
        'content-type': 'image/png',
        'cross-origin-resource-policy': 'cross-origin',
      });
      response.end(png);
    });
    await new Promise<void>((resolve) => logoServer.listen(0, '127.0.0.1', resolve));
    logoOrigin = `http://127.0.0.1:${(logoServer.address() as AddressInfo).port}`;
    browser = await launchChromium();
    t = await createTestApp({
      env: {
        BRAND_NAME: BRAND,
        // A path on the service's own origin: one of its files.
        BRAND_LOGO_URL: '/static/default-avatar.png',
        BRAND_ACCENT_COLOR: '#0b5d1e',
      },
    });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const ctx = { config: t.config, clock: t.clock };
    await createUser(t.database.db, ctx, { username: user.username, password: user.password });
    clientId = (
      await createClient(t.database.db, ctx, {
        name: 'Northwind Games',
        siteUrl: 'https://games.example',
        redirectUris: [redirectUri],
        logoUri: `${logoOrigin}/logo.png`,
      })
    ).client_id;
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
    await new Promise((resolve) => logoServer?.close(resolve));
  }, 60_000);

  for (const locale of ['en', 'ru'] as const) {
    it(`in ${locale}: language, no sideways scroll, no serious axe finding, images loaded, screenshots`, async () => {
      const log = await visit(locale);
      // Nothing blocked by the CSP; the only error is the 404 document's own status.
      const documentStatus = /^Failed to load resource: the server responded with a status of 404 /;
      expect(log.consoleErrors.filter((message) => !documentStatus.test(message))).toEqual([]);
      expect(log.pageErrors).toEqual([]);
      expect(log.failedRequests).toEqual([]);
      // Only the service's origin, and the app's logo from its own.
      for (const url of log.requests) expect([base, logoOrigin]).toContain(new URL(url).origin);
      expect(log.requests).toContain(`${logoOrigin}/logo.png`);
    }, 240_000);
  }
});
