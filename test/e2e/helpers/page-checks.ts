import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { AxeResults, Result as AxeViolation } from 'axe-core';
import type { Page, PageScreenshotOptions } from 'playwright-core';
import { expect } from 'vitest';
import { projectRoot } from '../../../src/lib/paths.js';

/** Where the pages' screenshots go (docs/pages.md shows them). */
export const SCREENSHOTS = path.join(projectRoot, 'docs', 'screenshots');

/**
 * Whether this run writes docs/screenshots/: only when asked with `UPDATE_SCREENSHOTS=1`, so that
 * running the tests leaves a checkout as it was (PNG bytes differ from one Chromium to the next).
 */
export function screenshotsWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.UPDATE_SCREENSHOTS === '1';
}

/**
 * Photographs the page into docs/screenshots/<name>.png when `screenshotsWanted()`, and otherwise
 * not at all: the checks before it have rendered and laid out the page already, and a full-page
 * PNG costs Chromium a good part of a second of CPU, about a hundred times a run.
 */
export async function saveScreenshot(
  page: Pick<Page, 'screenshot'>,
  name: string,
  options: PageScreenshotOptions = {},
  { env = process.env, folder = SCREENSHOTS }: { env?: NodeJS.ProcessEnv; folder?: string } = {},
): Promise<Buffer | undefined> {
  if (!screenshotsWanted(env)) return undefined;
  const png = await page.screenshot({ animations: 'disabled', caret: 'hide', ...options });
  await writeFile(path.join(folder, `${name}.png`), png);
  return png;
}

/** The two widths every page is checked and photographed at. */
export const WIDTHS = {
  phone: { width: 360, height: 740 },
  desktop: { width: 1280, height: 800 },
} as const;
export type Width = keyof typeof WIDTHS;

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe's WCAG 2.x A/AA rules and its best practices, on the page as it is now. */
export async function runAxe(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(
    () =>
      (globalThis as unknown as { axe: { run: (options: object) => Promise<AxeResults> } }).axe.run({
        runOnly: {
          type: 'tag',
          values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'],
        },
        resultTypes: ['violations'],
      }) as Promise<AxeResults>,
  );
  return results.violations;
}

/** One line per violation: impact, rule, help and where. */
export function describeViolations(violations: AxeViolation[]): string[] {
  return violations.map(
    (violation) =>
      `${violation.impact}: ${violation.id} (${violation.help}) at ${violation.nodes
        .map((node) => node.target.join(' '))
        .join(', ')}`,
  );
}

/** axe's serious and critical findings, in the dark and the light color scheme. */
export async function seriousFindings(page: Page): Promise<string[]> {
  const found: string[] = [];
  for (const colorScheme of ['dark', 'light'] as const) {
    await page.emulateMedia({ colorScheme });
    const serious = (await runAxe(page)).filter((v) => ['serious', 'critical'].includes(v.impact ?? ''));
    found.push(...describeViolations(serious).map((line) => `${colorScheme}: ${line}`));
  }
  return found;
}

/**
 * The checks of a page met in a story, at both widths: no sideways scroll and no serious axe
 * finding; then its screenshot, `<name>-en-<width>.png` (written only when asked: `saveScreenshot`).
 */
export async function inspectAndPhotograph(page: Page, name: string): Promise<void> {
  for (const [width, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth, `${name} ${width}`).toBeLessThanOrEqual(size.width);
    expect(await seriousFindings(page), `${name} ${width}`).toEqual([]);
    await saveScreenshot(page, `${name}-en-${width}`, { fullPage: true });
  }
  await page.setViewportSize(WIDTHS.desktop);
}
