import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPasskeys } from '../../src/modules/passkeys/passkeys.repository.js';
import type { TestApp } from '../helpers/app.js';
import { makeOperator, nextCode, type TestOperator } from '../helpers/console.js';
import { type ConsoleStage, openConsoleStage, submitAndWait } from './helpers/console-stage.js';
import { inspectAndPhotograph, seriousFindings, WIDTHS } from './helpers/page-checks.js';

/**
 * Entering the console as an operator does, in Chromium: sign in (password, then a code), the
 * console's own entry with a new code, its pages in both languages at phone and desktop widths,
 * light and dark, checked by axe; then a passkey added and the console entered with it alone, on a
 * virtual authenticator; leaving the console.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

let t: TestApp;
let base: string;
let stage: ConsoleStage;
let page: Page;
let operator: TestOperator;

const submit = (selector: string) => submitAndWait(page, selector);

const pathname = () => new URL(page.url()).pathname;

describe.skipIf(skipBrowserTests)('entering the console, in Chromium', () => {
  beforeAll(async () => {
    stage = await openConsoleStage();
    ({ t, base, page } = stage);
    operator = await makeOperator(t, 'owner', { username: 'night_operator' });
    const cdp = await stage.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
  }, 120_000);

  afterAll(async () => {
    await stage?.close();
  }, 60_000);

  it('signs in, then asks for a new code at the console door, and opens the page asked for', async () => {
    await page.goto(`${base}/admin/session`);
    expect(pathname()).toBe('/signin');
    await page.locator('#username').fill(operator.user.username);
    await page.locator('#password').fill(operator.user.password);
    await submit('form[action="/signin"] button[type="submit"]');
    await page.locator('#code').fill(nextCode(t, operator));
    await submit('form[action="/signin/second-factor"] button[type="submit"]');
    expect(pathname()).toBe('/admin/enter');
    expect(await page.locator('h1').textContent()).toBe('Enter the console');
    // The code field has the focus: the operator types at once.
    await page.waitForFunction(() => document.activeElement?.id === 'code');
    await inspectAndPhotograph(page, 'console-enter');
    await page.locator('#code').fill('123456');
    await submit('form[action="/admin/enter"] button[type="submit"]');
    expect(await page.locator('#proof-error').textContent()).toBe(
      'That code is not right. Try the current one.',
    );
    expect(await page.locator('#code').getAttribute('aria-invalid')).toBe('true');
    // By keyboard: the code typed into the focused field, then Enter.
    await page.locator('#code').fill('');
    await page.keyboard.type(nextCode(t, operator));
    await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')]);
    expect(pathname()).toBe('/admin/session');
    expect(await page.locator('.console-operator a').textContent()).toBe('night_operator · Owner');
    await inspectAndPhotograph(page, 'console-session');
  });

  it('is used by keyboard: the sections in order, each with a visible focus ring', async () => {
    await page.goto(`${base}/admin/session`);
    const reached: string[] = [];
    for (let i = 0; i < 15 && reached.at(-1) !== 'Leave the console'; i++) {
      await page.keyboard.press('Tab');
      const now = await page.evaluate(() => {
        const element = document.activeElement as HTMLElement;
        const style = getComputedStyle(element);
        return {
          text: element.textContent?.trim() ?? '',
          outline: `${style.outlineStyle} ${style.outlineWidth}`,
        };
      });
      expect(now.outline, now.text).toMatch(/^solid [1-9]/);
      reached.push(now.text);
    }
    const sections = ['Dashboard', 'Users', 'Applications', 'Sign-in providers', 'Audit log', 'Platform'];
    const at = reached.indexOf('Dashboard');
    expect(reached.slice(at, at + sections.length)).toEqual(sections);
    expect(reached[at + sections.length]).toBe('night_operator · Owner');
    expect(reached[at + sections.length + 1]).toBe('Leave the console');
  });

  it('reaches every control of each area by Tab alone, each with a visible focus ring', async () => {
    for (const path of ['/admin', '/admin/users', '/admin/clients', '/admin/audit', '/admin/platform']) {
      await page.goto(`${base}${path}`);
      // What a keyboard must reach: every visible link, button and field of the page.
      const controls = await page.evaluate(
        () =>
          [
            ...document.querySelectorAll<HTMLElement>(
              'a[href], button, input:not([type="hidden"]), select, textarea, [tabindex]:not([tabindex="-1"])',
            ),
          ].filter(
            (element) => !(element as HTMLButtonElement).disabled && element.getClientRects().length > 0,
          ).length,
      );
      // The skip link, the header, the sections, the operator, leave: at least that many.
      expect(controls, path).toBeGreaterThan(8);
      const reached = new Set<string>();
      for (let i = 0; i < controls + 3; i++) {
        await page.keyboard.press('Tab');
        const now = await page.evaluate(() => {
          const element = document.activeElement as HTMLElement | null;
          if (!element || element === document.body) return null;
          element.dataset.reached ??= String(document.querySelectorAll('[data-reached]').length);
          const style = getComputedStyle(element);
          return {
            key: element.dataset.reached,
            name: `${element.tagName} ${element.textContent?.trim().slice(0, 30) ?? ''}`,
            outline: `${style.outlineStyle} ${style.outlineWidth}`,
          };
        });
        if (!now) continue;
        expect(now.outline, `${path}: ${now.name}`).toMatch(/^solid [1-9]/);
        reached.add(now.key);
      }
      expect(reached.size, path).toBe(controls);
    }
  });

  it('speaks Russian, at a phone width, light and dark', async () => {
    await page.setViewportSize(WIDTHS.phone);
    await page.goto(`${base}/admin/session?lang=ru`);
    expect(await page.locator('h1').textContent()).toBe('Сеанс консоли');
    expect(await page.locator('.console-nav').getAttribute('aria-label')).toBe('Разделы консоли');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      WIDTHS.phone.width,
    );
    expect(await seriousFindings(page)).toEqual([]);
    await page.goto(`${base}/admin/session?lang=en`);
    await page.setViewportSize(WIDTHS.desktop);
  });

  it('enters with a passkey alone once the account has one', async () => {
    await page.goto(`${base}/account/security`);
    await page.locator('[data-passkey-add]').waitFor();
    await page.locator('#passkey-new-name').fill('Desk key');
    await Promise.all([
      page.waitForURL(`${base}/account/security?notice=passkey_added`),
      page.locator('[data-passkey-add]').click(),
    ]);
    expect(await listPasskeys(t.database.db, operator.user.id)).toHaveLength(1);
    await page.goto(`${base}/admin/session`);
    await submit('form[action="/admin/leave"] button');
    expect(pathname()).toBe('/account');
    expect(await page.locator('.notice').textContent()).toContain('You left the console');
    await page.goto(`${base}/admin/session`);
    expect(pathname()).toBe('/admin/enter');
    await Promise.all([
      page.waitForURL(`${base}/admin/session`),
      page.locator('[data-passkey-button]').click(),
    ]);
    expect(await page.locator('.console-facts').textContent()).toContain('passkey');
  });
});
