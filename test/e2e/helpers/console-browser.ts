import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { nextCode, type TestOperator } from '../../helpers/console.js';

async function submit(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForEvent('load'), page.locator(selector).click()]);
}

/**
 * Signs the operator in as a person does, from the console's address: the sign-in page (password),
 * the second step (a code from their app), then the console's own entry (a new code). Ends on
 * `path` (the dashboard by default) inside the console.
 */
export async function enterConsoleInBrowser(
  page: Page,
  base: string,
  t: TestApp,
  operator: TestOperator,
  path = '/admin',
): Promise<void> {
  await page.goto(`${base}${path}`);
  expect(new URL(page.url()).pathname).toBe('/signin');
  await page.locator('#username').fill(operator.user.username);
  await page.locator('#password').fill(operator.user.password);
  await submit(page, 'form[action="/signin"] button[type="submit"]');
  expect(new URL(page.url()).pathname).toBe('/signin/second-factor');
  await page.locator('#code').fill(nextCode(t, operator));
  await submit(page, 'form[action="/signin/second-factor"] button[type="submit"]');
  expect(new URL(page.url()).pathname).toBe('/admin/enter');
  await page.locator('#code').fill(nextCode(t, operator));
  await submit(page, 'form[action="/admin/enter"] button[type="submit"]');
  expect(new URL(page.url()).pathname).toBe(path);
}

/** Proves the second factor again on /admin/reauthenticate, where a destructive action led. */
export async function reauthenticateInBrowser(page: Page, t: TestApp, operator: TestOperator): Promise<void> {
  expect(new URL(page.url()).pathname).toBe('/admin/reauthenticate');
  await page.locator('#code').fill(nextCode(t, operator));
  await submit(page, 'form[action="/admin/reauthenticate"] button[type="submit"]');
}
