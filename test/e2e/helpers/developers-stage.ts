import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { makeUser, type TestUser } from '../../helpers/factories.js';
import { type ConsoleStage, checkConsolePage, openConsoleStage, submitAndWait } from './console-stage.js';

/**
 * What a developer portal story starts from: the service on localhost with a Chromium page (the
 * console's stage: its clock ten minutes behind the real one), and an account with a confirmed
 * e-mail address signed in through the sign-in page, on `/developers`.
 */
export interface DevelopersStage extends ConsoleStage {
  user: TestUser;
}

export async function openDevelopersStage(
  options: { env?: Record<string, string> } = {},
): Promise<DevelopersStage> {
  const stage = await openConsoleStage(options);
  const user = await makeUser(stage.t, { username: 'site_owner' });
  await signInToPortal(stage.page, stage.base, user);
  return { ...stage, user };
}

/** Signs `user` in from the portal's address, as a person does: the portal sends them to sign in and back. */
export async function signInToPortal(page: Page, base: string, user: TestUser): Promise<void> {
  await page.goto(`${base}/developers`);
  expect(new URL(page.url()).pathname).toBe('/signin');
  await page.locator('#username').fill(user.username);
  await page.locator('#password').fill(user.password);
  await submitAndWait(page, 'form[action="/signin"] button[type="submit"]');
  expect(new URL(page.url()).pathname).toBe('/developers');
}

/** The settings of a new application, as the creation form's fields take them. */
export interface NewApp {
  name: string;
  siteUrl: string;
  redirectUris: string[];
  kind?: 'confidential' | 'public';
}

/**
 * Creates an application through the portal's form in the browser and reads what the page shows
 * once: its client_id and (for a confidential client) its secret.
 */
export async function createAppInBrowser(
  page: Page,
  base: string,
  app: NewApp,
): Promise<{ clientId: string; secret: string }> {
  await page.goto(`${base}/developers/apps/new`);
  await page.locator('#name').fill(app.name);
  await page.locator('#siteUrl').fill(app.siteUrl);
  await page.locator('#redirectUris').fill(app.redirectUris.join('\n'));
  await page.locator(`#kind-${app.kind ?? 'confidential'}`).check();
  await submitAndWait(page, 'form[action="/developers/apps"] button[type="submit"]');
  const clientId = await page.locator('#client-id').inputValue();
  const secret = app.kind === 'public' ? '' : await page.locator('#client-secret').inputValue();
  return { clientId, secret };
}

/** A portal page at 390 px and on a desktop: no sideways scroll, no serious axe finding, light and dark. */
export const checkPortalPage = (page: Page, name: string, photo?: string) =>
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

/**
 * Tab alone reaches every visible link, button and field of the page (a radio group once), each
 * with a visible focus ring (as the console's areas are checked).
 */
export async function expectKeyboardReachable(page: Page, name: string): Promise<void> {
  const controls = await page.evaluate(
    () =>
      [
        ...document.querySelectorAll<HTMLElement>(
          'a[href], button, input:not([type="hidden"]), select, textarea, [tabindex]:not([tabindex="-1"])',
        ),
      ].filter(
        (element) =>
          !(element as HTMLButtonElement).disabled &&
          element.getClientRects().length > 0 &&
          // A radio group is one stop of Tab: its checked radio (the arrows move within it).
          !(element instanceof HTMLInputElement && element.type === 'radio' && !element.checked),
      ).length,
  );
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
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
    expect(now.outline, `${name}: ${now.name}`).toMatch(/^solid [1-9]/);
    reached.add(now.key);
  }
  expect(reached.size, name).toBe(controls);
}
