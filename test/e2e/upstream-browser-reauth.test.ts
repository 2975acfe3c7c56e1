import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkPage,
  clickTo,
  openUpstreamStage,
  problemsOf,
  providerButtonTexts,
  tabTo,
  type UpstreamStage,
  urlPath,
} from './helpers/upstream-stage.js';

/**
 * An account made through a provider has no password: when a page asks it to confirm it is the
 * account's owner (sudo mode), the provider does, in Chromium against the real server process and
 * the OpenID stand-in (see helpers/upstream-stage.ts). REAUTH_MAX_AGE_SECONDS is its least, 30 s,
 * and the test waits, asking the server, until the sign-in is that old.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';
const REAUTH_MAX_AGE_SECONDS = 30;

let stage: UpstreamStage;
let base: string;

describe.skipIf(skipBrowserTests)('confirming it is you through a provider, in Chromium', () => {
  beforeAll(async () => {
    stage = await openUpstreamStage(
      { oidc: { solo: { sub: 'sub-solo', preferred_username: 'solo' } }, github: {}, apple: {} },
      { REAUTH_MAX_AGE_SECONDS: String(REAUTH_MAX_AGE_SECONDS) },
    );
    base = stage.base;
  }, 180_000);

  afterAll(async () => {
    await stage?.close();
  }, 60_000);

  it('confirms with Example ID, by keyboard, where an account with a password types it; then the account deletes itself by its username', {
    timeout: 240_000,
  }, async () => {
    stage.oidc.nextAccount = 'solo';
    const { page, log } = await stage.person();
    await page.goto(`${base}/signin`);
    await clickTo(page, 'button[data-provider="example"]', '/signin/providers/continue');
    await page.locator('#username').fill('solo_here');
    await clickTo(page, 'form[action="/signin/providers/continue"] button[type="submit"]', '/account');

    // Until the sign-in is older than REAUTH_MAX_AGE_SECONDS, deletion opens at once.
    await expect
      .poll(
        async () => {
          const response = await page.request.get(`${base}/account/delete`, { maxRedirects: 0 });
          return response.headers().location ?? String(response.status());
        },
        { timeout: (REAUTH_MAX_AGE_SECONDS + 90) * 1000, interval: 2000 },
      )
      .toMatch(/^\/account\/reauthenticate\?/);

    await page.goto(`${base}/account/delete`);
    expect(new URL(page.url()).pathname).toBe('/account/reauthenticate');
    const reauthenticate = page.url();
    expect(await page.locator('#password').count()).toBe(0);
    expect(await providerButtonTexts(page)).toEqual(['Confirm with Example ID']);
    // The provider is the only way here: no "or" before it, with nothing to be the other way.
    expect(await page.locator('main .divider').count()).toBe(0);
    await checkPage(page, 're-authentication');
    await page.goto(`${reauthenticate}&lang=ru`);
    expect(await providerButtonTexts(page)).toEqual(['Подтвердить через Example ID']);
    await checkPage(page, 're-authentication ru');
    await page.goto(`${reauthenticate}&lang=en`);

    stage.oidc.requests.length = 0;
    expect(await tabTo(page, 'button[data-provider="example"]')).toBe('Confirm with Example ID');
    await Promise.all([page.waitForURL(urlPath('/account/delete')), page.keyboard.press('Enter')]);
    // A new sign-in at the provider, not its session's (OpenID Connect Core §3.1.2.1).
    const authorize = stage.oidc.requests.find((request) => request.path.endsWith('/auth'));
    expect(authorize?.params.prompt).toBe('login');

    await page.locator('input[name="confirm_username"]').fill('solo_here');
    await clickTo(page, 'form[action="/account/delete"] button[type="submit"]', '/account/deleted');
    expect(await page.locator('h1').textContent()).toBe('Your account has been deleted');
    // The provider's account is free again: signing in with it asks for a username.
    const again = await stage.person();
    await again.page.goto(`${base}/signin`);
    await clickTo(again.page, 'button[data-provider="example"]', '/signin/providers/continue');
    expect([...problemsOf(log), ...problemsOf(again.log)]).toEqual([]);
  });
});
