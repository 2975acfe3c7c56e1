import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { freePort } from '../../helpers/tcp-proxy.js';
import { launchChromium } from './chromium.js';
import { saveScreenshot, seriousFindings, WIDTHS } from './page-checks.js';

/** The phone width the console is checked at (the issue's 390 px, above the pages' 360). */
export const PHONE_390 = { width: 390, height: 844 };

/** The service listening on localhost and a Chromium page: what every console story starts from. */
export interface ConsoleStage {
  t: TestApp;
  base: string;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/**
 * Starts the service on a free port of localhost (a WebAuthn relying party, unlike an address),
 * its clock ten minutes behind the real one (cookies and tokens are judged by the real clock), and
 * opens an English Chromium page at desktop width. `env` adds settings (CLIENT_REGISTRATION…).
 */
export async function openConsoleStage(
  options: { acceptDownloads?: boolean; env?: Record<string, string> } = {},
): Promise<ConsoleStage> {
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const t = await createTestApp({ env: { ...options.env, PUBLIC_URL: base } });
  t.clock.set(new Date(Date.now() - 10 * 60 * 1000));
  await t.app.listen({ host: 'localhost', port });
  const browser = await launchChromium();
  const context = await browser.newContext({
    locale: 'en-GB',
    viewport: WIDTHS.desktop,
    ...(options.acceptDownloads ? { acceptDownloads: true } : {}),
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return {
    t,
    base,
    browser,
    context,
    page,
    close: async () => {
      await context.close().catch(() => undefined);
      await browser.close();
      await t.close();
    },
  };
}

/** Clicks what sends a form and waits for the page it leads to. */
export async function submitAndWait(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForEvent('load'), page.locator(selector).click()]);
}

/**
 * A console page at 390 px and on a desktop: no sideways scroll and no serious axe finding, light
 * and dark; photographed as docs/screenshots/<photo>-<390|desktop>.png when screenshots are asked
 * for. `settle` runs after each resize (a chart redraws to its width).
 */
export async function checkConsolePage(
  page: Page,
  name: string,
  options: { photo?: string; settle?: () => Promise<void> } = {},
): Promise<void> {
  for (const [width, size] of [
    ['390', PHONE_390],
    ['desktop', WIDTHS.desktop],
  ] as const) {
    await page.setViewportSize(size);
    await options.settle?.();
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth, `${name} ${width}`).toBeLessThanOrEqual(size.width);
    expect(await seriousFindings(page), `${name} ${width}`).toEqual([]);
    await page.emulateMedia({ colorScheme: 'light' });
    if (options.photo) await saveScreenshot(page, `${options.photo}-${width}`, { fullPage: true });
  }
}
