import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { launchChromium } from '../e2e/helpers/chromium.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/tcp-proxy.js';

/*
 * public/passkeys.js in Chromium: past the address's limit of refused forms, the passkey button's
 * request answers 429 rate_limited with Retry-After, and the page says how many seconds to wait,
 * in its language and plural form (README "Rate limits"), not "Something went wrong".
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */

const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

describe.skipIf(skipBrowserTests)('the passkey button past the rate limit', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    t = await createTestApp({
      env: { PUBLIC_URL: base, RATE_LIMIT_SIGNIN_PER_MIN: '1', RATE_LIMIT_PUBLIC_PER_MIN: '1000' },
      clock: systemClock,
    });
    await t.app.listen({ host: 'localhost', port });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  }, 60_000);

  it.each([
    ['en-GB', /^Too many attempts\. Please wait (\d+) seconds? and try again\.$/],
    ['ru-RU', /^Слишком много попыток\. Подождите (\d+) секунд[уы]? и попробуйте снова\.$/],
  ])(
    'says how many seconds to wait (%s)',
    async (locale, expected) => {
      let context: BrowserContext | undefined;
      try {
        context = await browser.newContext({ locale });
        const page = await context.newPage();
        page.setDefaultTimeout(15_000);
        await page.goto(`${base}/signin`);
        // One form refused from this browser's address (no CSRF token) uses up its limit of one.
        const refused = await page.evaluate(async () => {
          const res = await fetch('/signin', {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: 'username=someone&password=x&csrf_token=x',
          });
          return res.status;
        });
        expect([403, 429]).toContain(refused);
        const button = page.locator('[data-passkey-button]');
        await button.click();
        const message = page.locator('[data-passkey-message]');
        await expect
          .poll(async () => (await message.isVisible()) && (await message.textContent()))
          .toMatch(expected);
        const seconds = Number(expected.exec((await message.textContent()) ?? '')?.[1]);
        expect(seconds).toBeGreaterThan(0);
        expect(seconds).toBeLessThanOrEqual(60);
        if (locale === 'ru-RU') {
          const form = new Intl.PluralRules('ru').select(seconds);
          const word = { one: 'секунду', few: 'секунды', many: 'секунд', other: 'секунды' }[form as string];
          expect(await message.textContent()).toContain(`${seconds} ${word} `);
        }
      } finally {
        await context?.close();
      }
    },
    60_000,
  );
});
