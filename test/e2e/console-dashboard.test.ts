import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRollups } from '../../src/modules/rollups/rollups.repository.js';
import type { TestApp } from '../helpers/app.js';
import { makeOperator } from '../helpers/console.js';
import { type PageLog, recordPage } from './helpers/chromium.js';
import { enterConsoleInBrowser } from './helpers/console-browser.js';
import { type ConsoleStage, openConsoleStage } from './helpers/console-stage.js';
import { saveScreenshot, seriousFindings, WIDTHS } from './helpers/page-checks.js';

/**
 * The console's dashboard in Chromium: uPlot draws every chart on a canvas from this origin under
 * the pages' CSP (no violation, no script error), in English and Russian, at 390 px and on a
 * desktop without sideways scrolling, axe-clean in light and dark, and drawn again in the dark
 * scheme's colours when the scheme changes.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';
const CHARTS = 7;
const MINUTE = 60_000;

let t: TestApp;
let base: string;
let stage: ConsoleStage;
let page: Page;
let log: PageLog;

/** The charts uPlot drew: how many, and each one's canvas width. */
async function drawn(): Promise<{ plots: number; canvases: number; widest: number; room: number }> {
  await page.waitForFunction(
    (count) => document.querySelectorAll('.dashboard-plot .uplot').length === count,
    CHARTS,
  );
  return page.evaluate(() => {
    const canvases = [...document.querySelectorAll<HTMLCanvasElement>('.dashboard-plot canvas')];
    const room = Math.min(
      ...[...document.querySelectorAll('.dashboard-plot')].map((each) => each.clientWidth),
    );
    return {
      plots: document.querySelectorAll('.dashboard-plot .uplot').length,
      canvases: canvases.length,
      widest: Math.max(...canvases.map((canvas) => canvas.getBoundingClientRect().width)),
      room,
    };
  });
}

describe.skipIf(skipBrowserTests)('the console dashboard, in Chromium', () => {
  beforeAll(async () => {
    stage = await openConsoleStage();
    ({ t, base, page } = stage);
    const operator = await makeOperator(t, 'auditor', { username: 'dashboard_reader' });
    const now = Math.floor(t.clock.now().getTime() / MINUTE) * MINUTE;
    await addRollups(
      t.database.db,
      Array.from({ length: 50 }, (_, index) => [
        { minute: new Date(now - index * MINUTE), name: 'sign_ins_ok', key: '', value: 20 + (index % 7) },
        { minute: new Date(now - index * MINUTE), name: 'sign_ins_failed', key: '', value: index % 3 },
        { minute: new Date(now - index * MINUTE), name: 'tokens_issued', key: '', value: 30 + (index % 5) },
        { minute: new Date(now - index * MINUTE), name: 'http_4xx', key: 'oauth', value: index % 4 },
      ]).flat(),
    );
    log = recordPage(page);
    await enterConsoleInBrowser(page, base, t, operator);
  }, 120_000);

  afterAll(async () => {
    await stage?.close();
  }, 60_000);

  for (const lang of ['en', 'ru'] as const) {
    it(`draws every chart on a canvas (${lang}), fits 390 px and the desktop, axe-clean light and dark`, async () => {
      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto(`${base}/admin?lang=${lang}`);
      expect(await page.locator('h1').textContent()).toBe(lang === 'en' ? 'Dashboard' : 'Сводка');
      for (const [name, size] of [
        ['390', { width: 390, height: 844 }],
        ['desktop', WIDTHS.desktop],
      ] as const) {
        await page.setViewportSize(size);
        // The charts follow the width (redrawn after a resize).
        await page.waitForFunction(() =>
          [...document.querySelectorAll<HTMLElement>('.dashboard-plot')].every((plot) => {
            const canvas = plot.querySelector('canvas');
            return canvas !== null && canvas.getBoundingClientRect().width <= plot.clientWidth + 1;
          }),
        );
        const charts = await drawn();
        expect(charts.plots).toBe(CHARTS);
        expect(charts.canvases).toBeGreaterThanOrEqual(CHARTS);
        expect(charts.widest).toBeLessThanOrEqual(charts.room + 1);
        expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(
          size.width,
        );
        expect(await seriousFindings(page), `${lang} ${name}`).toEqual([]);
        await saveScreenshot(page, `console-dashboard-${lang}-${name}`, { fullPage: true });
      }
      expect(log.consoleErrors).toEqual([]);
      expect(log.pageErrors).toEqual([]);
      expect(log.failedRequests).toEqual([]);
    });
  }

  it('draws again in the dark scheme’s colours, and switches ranges by links', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${base}/admin?lang=en`);
    await drawn();
    const markerColour = () =>
      page.evaluate(() => {
        const marker = document.querySelector<HTMLElement>(
          '.dashboard-plot .u-legend .u-series:first-child .u-marker',
        );
        return marker ? getComputedStyle(marker).borderColor : null;
      });
    expect(await markerColour()).toBe('rgb(26, 86, 196)');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction(
      () =>
        getComputedStyle(
          document.querySelector('.dashboard-plot .u-legend .u-series:first-child .u-marker') as Element,
        ).borderColor === 'rgb(122, 167, 247)',
    );
    expect((await drawn()).plots).toBe(CHARTS);

    await Promise.all([
      page.waitForEvent('load'),
      page.locator('.dashboard-ranges a[href="/admin?range=week"]').click(),
    ]);
    expect(new URL(page.url()).search).toBe('?range=week');
    expect(await page.locator('.dashboard-ranges a[aria-current="page"]').first().textContent()).toBe(
      'Last week',
    );
    expect((await drawn()).plots).toBe(CHARTS);
    expect(log.pageErrors).toEqual([]);
  });
});
