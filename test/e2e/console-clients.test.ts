import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { makeOperator, type TestOperator } from '../helpers/console.js';
import { makeUser, mintCode, type TestClient } from '../helpers/factories.js';
import { exchangeCode } from '../helpers/http.js';
import { enterConsoleInBrowser } from './helpers/console-browser.js';
import {
  type ConsoleStage,
  checkConsolePage,
  openConsoleStage,
  submitAndWait,
} from './helpers/console-stage.js';

/**
 * The console's applications as an owner uses them in Chromium: register one (its secret shown
 * once, and working), an edit refused beside its field then saved, a rotation with an overlap
 * (both secrets working), disabling; each page in English and Russian, at 390 px and on a desktop
 * without sideways scrolling, axe-clean in the light and the dark scheme. The tests run in order.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

let t: TestApp;
let base: string;
let stage: ConsoleStage;
let page: Page;
let operator: TestOperator;
let app: TestClient;
/** Script errors and CSP refusals the pages caused: none expected. */
const pageErrors: string[] = [];

const submit = (selector: string) => submitAndWait(page, selector);

/**
 * No sideways scroll at 390 px and on a desktop, and no serious axe finding in either scheme; with
 * `photo`, docs/screenshots/<photo>-<390|desktop>.png when screenshots are asked for.
 */
const checkPage = (name: string, photo?: string) =>
  checkConsolePage(page, name, {
    photo,
    // A chart follows the width (redrawn after a resize).
    settle: async () => {
      await page.waitForFunction(() =>
        [...document.querySelectorAll<HTMLElement>('.dashboard-plot')].every((plot) => {
          const canvas = plot.querySelector('canvas');
          return canvas === null || canvas.getBoundingClientRect().width <= plot.clientWidth + 1;
        }),
      );
    },
  });

const tokenStatus = async (client: TestClient) =>
  (await exchangeCode(t.app, client, await mintCode(t, client, await makeUser(t)))).statusCode;

describe.skipIf(skipBrowserTests)("the console's applications, in Chromium", () => {
  beforeAll(async () => {
    stage = await openConsoleStage();
    ({ t, base, page } = stage);
    operator = await makeOperator(t, 'owner', { username: 'apps_owner' });
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

  it('registers an application and shows its secret once', async () => {
    await enterConsoleInBrowser(page, base, t, operator, '/admin/clients');
    expect(await page.locator('h1').textContent()).toBe('Applications');
    await checkPage('list', 'console-clients-en');
    await submit('a[href="/admin/clients/new"]');
    await checkPage('new');
    await page.locator('#name').fill('Lantern Books');
    await page.locator('#siteUrl').fill('https://lantern.example');
    await page.locator('#redirectUris').fill('https://lantern.example/cb\nhttps://lantern.example/cb2');
    await page.locator('#wallet').check();
    await submit('form[action="/admin/clients"] button[type="submit"]');
    const secret = await page.locator('#client-secret').inputValue();
    expect(secret).toMatch(/^sk_/);
    const clientId = (await page.locator('code').first().textContent()) ?? '';
    expect(clientId).toMatch(/^pk_/);
    app = { clientId, clientSecret: secret, redirectUri: 'https://lantern.example/cb' };
    expect(await tokenStatus(app)).toBe(200);
    await checkPage('created');
    await submit(`a[href="/admin/clients/${clientId}"]`);
    expect(await page.content()).not.toContain(secret);
  });

  it('shows a refused edit beside its field, then saves a valid one', async () => {
    await page.locator('#siteUrl').fill('ftp://lantern.example');
    await submit(`form[action="/admin/clients/${app.clientId}"] button[type="submit"]`);
    expect(await page.locator('#siteUrl').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#siteUrl-error').textContent()).toContain('site URL must be');
    expect(await page.locator('.alert[role="alert"]').isVisible()).toBe(true);
    await checkPage('edit refused');
    await page.locator('#siteUrl').fill('https://lantern.example');
    await page.locator('#name').fill('Lantern Books & Maps');
    await submit(`form[action="/admin/clients/${app.clientId}"] button[type="submit"]`);
    expect(new URL(page.url()).search).toBe('?done=updated');
    expect(await page.locator('p[role="status"]').textContent()).toBe('The settings were saved.');
    expect(await page.locator('h1').textContent()).toBe('Lantern Books & Maps');
    // The usage chart is drawn by the dashboard's script and uPlot, from this origin under the CSP.
    await page.waitForFunction(
      () => document.querySelectorAll('.console-usage-plot .uplot canvas').length === 1,
    );
    await checkPage('app', 'console-client-en');
  });

  it('rotates the secret keeping the old one for a day: both work', async () => {
    await page.locator('#overlap').selectOption('86400');
    await submit(`form[action="/admin/clients/${app.clientId}/rotate-secret"] button[type="submit"]`);
    const renewed = { ...app, clientSecret: await page.locator('#client-secret').inputValue() };
    expect(renewed.clientSecret).not.toBe(app.clientSecret);
    expect(await page.locator('main').textContent()).toContain('The old secret works until');
    await checkPage('rotated', 'console-client-rotated-en');
    await t.sync();
    expect(await tokenStatus(app)).toBe(200);
    expect(await tokenStatus(renewed)).toBe(200);
    app = renewed;
  });

  it('disables the application, which stops its secret, and enables it again', async () => {
    await page.goto(`${base}/admin/clients/${app.clientId}`);
    expect(await page.locator('main').textContent()).toContain('The previous secret still works until');
    await submit(`form[action="/admin/clients/${app.clientId}/disable"] button[type="submit"]`);
    expect(new URL(page.url()).search).toBe('?done=disabled');
    expect(await page.locator(`form[action="/admin/clients/${app.clientId}/enable"]`).count()).toBe(1);
    expect(await tokenStatus(app)).toBe(401);
    await checkPage('disabled');
    // Enabled again, the same secret works again.
    await submit(`form[action="/admin/clients/${app.clientId}/enable"] button[type="submit"]`);
    expect(new URL(page.url()).search).toBe('?done=enabled');
    expect(await page.locator(`form[action="/admin/clients/${app.clientId}/disable"]`).count()).toBe(1);
    expect(await tokenStatus(app)).toBe(200);
  });

  it('reads in Russian on a phone, axe-clean in both schemes', async () => {
    await page.goto(`${base}/admin/clients?lang=ru`);
    expect(await page.locator('h1').textContent()).toBe('Приложения');
    await checkPage('list ru');
    await page.goto(`${base}/admin/clients/${app.clientId}?lang=ru`);
    expect(await page.locator('main').textContent()).toContain('Адреса возврата (redirect URI)');
    await checkPage('app ru', 'console-client-ru');
    await page.locator('#redirectUris').fill('');
    await submit(`form[action="/admin/clients/${app.clientId}"] button[type="submit"]`);
    expect(await page.locator('.alert[role="alert"]').textContent()).toContain(
      'Некоторые поля нужно исправить',
    );
    expect(await page.locator('#redirectUris').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#redirectUris-error').textContent()).toBe(
      'Не принято: Нужен хотя бы один адрес возврата, если приложению не разрешён вход на устройствах (RFC 8628).',
    );
    await checkPage('edit refused ru');
    await page.goto(`${base}/admin/clients/new?lang=ru`);
    await checkPage('new ru');
    expect(pageErrors).toEqual([]);
  });

  it('adds a sign-in provider, a refusal shown beside its field, each page axe-clean in English and Russian', async () => {
    await page.goto(`${base}/admin/providers?lang=en`);
    await checkPage('providers');
    await page.locator('#name').fill('corp');
    await page.locator('#kind').selectOption('oidc');
    await page.locator('#displayName').fill('Corp SSO');
    await page.locator('#issuer').fill('http://sso.example');
    await page.locator('#clientId').fill('idp');
    await page.locator('#clientSecret').fill('corp-secret');
    await submit('form[action="/admin/providers"] button[type="submit"]');
    expect(await page.locator('#issuer').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#clientSecret').inputValue()).toBe('');
    await checkPage('provider refused');
    await page.locator('#issuer').fill('https://sso.example');
    await page.locator('#clientSecret').fill('corp-secret');
    await submit('form[action="/admin/providers"] button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe('/admin/providers/corp');
    expect(await page.locator('main').textContent()).toContain('/signin/providers/corp/callback');
    await checkPage('provider');
    await page.goto(`${base}/admin/providers/corp?lang=ru`);
    await checkPage('provider ru');
    await page.goto(`${base}/admin/providers?lang=ru`);
    expect(await page.locator('h1').textContent()).toBe('Провайдеры входа');
    await checkPage('providers ru');
    expect(pageErrors).toEqual([]);
  });
});
