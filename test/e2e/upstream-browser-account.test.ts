import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WIDTHS } from './helpers/page-checks.js';
import {
  checkPage,
  clickTo,
  mainText,
  openUpstreamStage,
  type Person,
  PHONE_390,
  problemsOf,
  providerButtonTexts,
  tabTo,
  type UpstreamStage,
  urlPath,
} from './helpers/upstream-stage.js';

/**
 * The account's "Other accounts you sign in with" section in Chromium, against the real server
 * process and stand-in providers (see helpers/upstream-stage.ts): an account made through the
 * OpenID stand-in links GitHub from its security page by keyboard, signs in with it from another
 * browser, unlinks it, and is refused the unlinking of its last way in with an alert; the section
 * axe-clean at 390 px and on a desktop, in English and Russian. The tests run in order.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';
const AXE_STORY_MS = 120_000;

let stage: UpstreamStage;
let base: string;
/** The browser of the person whose account only providers open. */
let owner: Person;

const continueWith = (name: string) => `button[data-provider="${name}"]`;

/** The providers listed in the section, one line each: the provider's name and who at it. */
async function linkedRows(page: Page): Promise<string[]> {
  return (await page.locator('.linked-providers li > span').allTextContents()).map((row) =>
    row.replace(/\s+/g, ' ').trim(),
  );
}

/**
 * Whether each link's Unlink button sits beside its provider (on the same row) rather than
 * below it, at 390 px and on a desktop: the button says which link it removes by where it is.
 */
async function unlinkBesideEachLink(page: Page): Promise<boolean[]> {
  const rows: boolean[] = [];
  for (const size of [PHONE_390, WIDTHS.desktop]) {
    await page.setViewportSize(size);
    rows.push(
      ...(await page.locator('.linked-providers li').evaluateAll((items) =>
        items.map((item) => {
          const text = (item.querySelector(':scope > span') as HTMLElement).getBoundingClientRect();
          const button = (item.querySelector('form') as HTMLElement).getBoundingClientRect();
          return button.top < text.bottom && button.left >= text.right;
        }),
      )),
    );
  }
  return rows;
}

describe.skipIf(skipBrowserTests)("the account's other ways to sign in, in Chromium", () => {
  beforeAll(async () => {
    stage = await openUpstreamStage({
      oidc: { lin: { sub: 'sub-lin', preferred_username: 'lin', name: 'Lin Wei' } },
      github: {
        octo: {
          id: 583231,
          login: 'octo_lin',
          name: 'Lin on GitHub',
          emails: [{ email: 'lin@github.example', primary: true, verified: true }],
        },
      },
      apple: {},
    });
    base = stage.base;
  }, 180_000);

  afterAll(async () => {
    await stage?.close();
  }, 60_000);

  it('links GitHub from the security page of an account made through Example ID, by keyboard, and signs in with it', {
    timeout: AXE_STORY_MS,
  }, async () => {
    stage.oidc.nextAccount = 'lin';
    owner = await stage.person();
    const { page } = owner;
    await page.goto(`${base}/signup`);
    await clickTo(page, continueWith('example'), '/signin/providers/continue');
    await page.locator('#username').fill('lin_only');
    await clickTo(page, 'form[action="/signin/providers/continue"] button[type="submit"]', '/account');

    await page.goto(`${base}/account/security`);
    const section = page.locator('#providers');
    expect(await section.locator('h2').textContent()).toBe('Other accounts you sign in with');
    expect(await linkedRows(page)).toEqual([expect.stringMatching(/^Example ID lin Linked .+$/)]);
    // Only the providers not linked yet are offered.
    expect(await providerButtonTexts(page)).toEqual(['Link GitHub', 'Link Apple']);

    stage.github.nextAccount = 'octo';
    expect(await tabTo(page, `#providers ${continueWith('github')}`)).toBe('Link GitHub');
    await Promise.all([
      page.waitForURL(urlPath(/^\/account\/security\?providers=linked$/)),
      page.keyboard.press('Enter'),
    ]);
    expect(await section.locator('[role="status"]').textContent()).toBe(
      'Linked. You can now sign in with it.',
    );
    expect(await linkedRows(page)).toEqual([
      expect.stringMatching(/^Example ID lin Linked /),
      expect.stringMatching(/^GitHub octo_lin Linked /),
    ]);
    expect(await providerButtonTexts(page)).toEqual(['Link Apple']);
    expect(await unlinkBesideEachLink(page)).toEqual([true, true, true, true]);
    await checkPage(page, 'providers section', { photo: 'security-providers-en', part: '#providers' });

    // Another browser: GitHub now opens the same account.
    const elsewhere = await stage.person();
    await elsewhere.page.goto(`${base}/signin`);
    await clickTo(elsewhere.page, continueWith('github'), '/account');
    expect(await mainText(elsewhere.page)).toContain('@lin_only');
    expect([...problemsOf(owner.log), ...problemsOf(elsewhere.log)]).toEqual([]);
  });

  it('unlinks GitHub, and keeps the last way in with an alert that says why', {
    timeout: AXE_STORY_MS,
  }, async () => {
    const { page } = owner;
    const section = page.locator('#providers');
    const unlink = section.locator('button[aria-label^="Unlink GitHub"]');
    expect(await unlink.textContent()).toBe('Unlink');
    await Promise.all([
      page.waitForURL(urlPath(/^\/account\/security\?providers=unlinked$/)),
      unlink.click(),
    ]);
    expect(await section.locator('[role="status"]').textContent()).toBe('Unlinked.');
    expect(await linkedRows(page)).toEqual([expect.stringMatching(/^Example ID lin /)]);

    // Example ID is now the only way in: an account without a password or passkey keeps it.
    await Promise.all([
      page.waitForURL(urlPath(/^\/account\/security\?providers=last_way$/)),
      section.locator('button[aria-label^="Unlink Example ID"]').click(),
    ]);
    expect(await section.locator('[role="alert"]').textContent()).toBe(
      'This is the last way to sign in to your account. Set a password (through “Forgot password”) or add a passkey first.',
    );
    expect(await linkedRows(page)).toEqual([expect.stringMatching(/^Example ID lin /)]);
    await checkPage(page, 'last way', { photo: 'security-providers-last-way-en', part: '#providers' });

    // GitHub no longer opens the account: it starts a new one.
    const elsewhere = await stage.person();
    await elsewhere.page.goto(`${base}/signin`);
    await clickTo(elsewhere.page, continueWith('github'), '/signin/providers/continue');
    expect(await mainText(elsewhere.page)).toContain('You signed in at GitHub as octo_lin.');
    expect(problemsOf(owner.log)).toEqual([]);
  });

  it('shows the section in Russian', { timeout: AXE_STORY_MS }, async () => {
    const { page, log } = await stage.person('ru-RU');
    await page.goto(`${base}/signin`);
    await clickTo(page, continueWith('example'), '/account');
    expect(await page.locator('h1').textContent()).toBe('Ваш аккаунт');
    await page.goto(`${base}/account/security`);
    const section = page.locator('#providers');
    expect(await section.locator('h2').textContent()).toBe('Другие аккаунты для входа');
    expect(await linkedRows(page)).toEqual([expect.stringMatching(/^Example ID lin Привязан .+$/)]);
    expect(await section.locator('button.danger').textContent()).toBe('Отвязать');
    expect(await providerButtonTexts(page)).toEqual(['Привязать GitHub', 'Привязать Apple']);
    await checkPage(page, 'providers section ru', { photo: 'security-providers-ru', part: '#providers' });
    expect(problemsOf(log)).toEqual([]);
  });
});
