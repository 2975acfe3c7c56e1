import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_TAGS } from '../../src/http/openapi-tags.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, type PageLog, recordPage } from './helpers/chromium.js';
import { saveScreenshot, WIDTHS } from './helpers/page-checks.js';

/**
 * The API reference (/api/v1/docs) in Chromium: Swagger UI, served by the service itself, draws
 * the OpenAPI document grouped by feature, under the pages' CSP, and the page asks nothing of
 * another origin (no CDN, no web font, no validator badge, no telemetry).
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

let t: TestApp;
let base: string;
let browser: Browser;
let page: Page;
let log: PageLog;
/** Every request the page made, by Chromium's own account: its URL and what kind of resource. */
const requests: Array<{ url: string; type: string }> = [];

async function photograph(name: string): Promise<void> {
  await saveScreenshot(page, name);
}

/**
 * Opens the API's groups, as a reader does: the page lists its groups closed, since Swagger UI's
 * first drawing of every operation of the document at once stopped after the first few.
 */
async function openApiGroups(): Promise<void> {
  const groups = page.locator('#api-reference h3.opblock-tag');
  await groups.nth(OPENAPI_TAGS.length - 1).waitFor();
  for (const { name } of OPENAPI_TAGS) {
    if (name === 'Pages' || name === 'Assets') continue;
    const group = page.locator(`#api-reference h3.opblock-tag[data-tag="${name}"]`);
    await group.click();
    await page.locator(`#api-reference h3.opblock-tag[data-tag="${name}"][data-is-open="true"]`).waitFor();
  }
  await page.evaluate(() => window.scrollTo(0, 0));
}

describe.skipIf(skipBrowserTests)('the API reference in Chromium', () => {
  beforeAll(async () => {
    t = await createTestApp();
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    log = recordPage(page);
    page.on('request', (request) => requests.push({ url: request.url(), type: request.resourceType() }));
    await page.goto(`${base}/api/v1/docs`, { waitUntil: 'networkidle' });
    await page.locator('#api-reference .opblock-tag').first().waitFor();
    await openApiGroups();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('draws every group of the OpenAPI document, with its description, in the document’s order', async () => {
    const groups = await page.locator('#api-reference .opblock-tag-section h3').allTextContents();
    const names = groups.map((text) => text.trim());
    const expected = OPENAPI_TAGS.map((tag) => tag.name);
    for (const name of expected)
      expect(
        names.some((text) => text.startsWith(name)),
        name,
      ).toBe(true);
    const order = expected.map((name) => names.findIndex((text) => text.startsWith(name)));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    await expect
      .poll(() => page.locator('#api-reference').textContent())
      .toContain('The coin wallet, for clients holding the wallet right');
  });

  it('lists known operations under their group, with their method and path', async () => {
    const section = (group: string) =>
      page.locator('.opblock-tag-section', { has: page.locator('h3', { hasText: group }) });
    const operation = (group: string, path: string) =>
      section(group).locator('.opblock', {
        has: page.locator('.opblock-summary-path', { hasText: new RegExp(`^${path}$`) }),
      });
    for (const [group, method, path] of [
      ['OAuth and OpenID Connect', 'POST', '/api/v1/oauth/token'],
      ['OAuth and OpenID Connect', 'GET', '/api/v1/oauth/userinfo'],
      ['Profiles', 'GET', '/api/v1/me'],
      ['Search', 'GET', '/api/users/search'],
      ['Premium', 'GET', '/api/v1/premium/status'],
      ['Wallet', 'POST', '/api/v1/wallet/charge'],
      ['Platform', 'GET', '/api/v1/platform/status'],
      ['Mobile', 'POST', '/api/v1/mobile/verify'],
      ['Catalogue', 'GET', '/api/v1/'],
    ] as const) {
      const found = operation(group, path).filter({
        has: page.locator('.opblock-summary-method', { hasText: method }),
      });
      expect(await found.count(), `${method} ${path} under ${group}`).toBe(1);
      await found.scrollIntoViewIfNeeded();
      expect(await found.isVisible()).toBe(true);
    }
  });

  it('shows an operation’s example response when opened', async () => {
    await page.evaluate(() => window.scrollTo(0, 0));
    await photograph('api-reference-desktop');
    const status = page.locator('#operations-Platform-get_api_v1_platform_status');
    await status.locator('.opblock-summary-control').click();
    const body = status.locator('.responses-wrapper');
    // The document's own example (src/http/openapi-examples.ts), not one made up from the schema.
    await expect.poll(() => body.textContent()).toContain('"Sign-in is slow for some users."');
    await status.scrollIntoViewIfNeeded();
    await photograph('api-reference-example-desktop');
  });

  it('fits a phone’s width: nothing scrolls sideways', async () => {
    const phone = await page.context().browser()?.newContext({ viewport: WIDTHS.phone });
    const small = await phone?.newPage();
    if (!small) throw new Error('no page');
    await small.goto(`${base}/api/v1/docs`, { waitUntil: 'networkidle' });
    await small.locator('#api-reference .opblock-tag').first().waitFor();
    const scrollWidth = await small.evaluate(() => document.documentElement.scrollWidth);
    await saveScreenshot(small, 'api-reference-phone');
    await phone?.close();
    expect(scrollWidth).toBeLessThanOrEqual(WIDTHS.phone.width);
  });

  it('asks nothing of another origin: every request goes to the service itself', () => {
    const origin = new URL(base).origin;
    expect(requests.length).toBeGreaterThan(3);
    const elsewhere = requests.filter(
      (request) => !request.url.startsWith('data:') && new URL(request.url).origin !== origin,
    );
    expect(elsewhere).toEqual([]);
    // The renderer, its start and the document were fetched from here.
    const urls = requests.map((request) => new URL(request.url, origin).pathname);
    expect(urls).toEqual(
      expect.arrayContaining([
        '/assets/swagger-ui-bundle.js',
        '/assets/api-reference.js',
        '/api/v1/openapi.json',
      ]),
    );
  });

  it('runs under the pages’ CSP without a violation, an error or a failed load', async () => {
    const response = await page.request.get(`${base}/api/v1/docs`);
    const csp = response.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("style-src 'self';");
    expect(csp).not.toContain('unsafe');
    expect(log.consoleErrors).toEqual([]);
    expect(log.pageErrors).toEqual([]);
    expect(log.failedRequests).toEqual([]);
  });
});
