import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/lib/secrets.js';
import { insertSession } from '../../src/modules/accounts/sessions.repository.js';
import { secondFactorsOf } from '../../src/modules/sign-in-policy/sign-in-policy.service.js';
import { getBalance } from '../../src/modules/wallet/wallet.service.js';
import type { TestApp } from '../helpers/app.js';
import { makeOperator, type TestOperator } from '../helpers/console.js';
import { makeUser, type TestUser } from '../helpers/factories.js';
import { makeTotpUser } from '../helpers/totp.js';
import { enterConsoleInBrowser, reauthenticateInBrowser } from './helpers/console-browser.js';
import {
  type ConsoleStage,
  checkConsolePage,
  openConsoleStage,
  submitAndWait,
} from './helpers/console-stage.js';

/**
 * The console's users pages in Chromium, as an owner uses them on a support request: search by a
 * part of the address, open the user, credit the wallet with a reason, be refused a debit beyond
 * the balance; each page in English and Russian, at 390 px and on a desktop without sideways
 * scrolling, axe-clean in light and dark.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

let t: TestApp;
let base: string;
let stage: ConsoleStage;
let page: Page;
let operator: TestOperator;
let hatter: TestUser;

const submit = (selector: string) => submitAndWait(page, selector);

const pathname = () => new URL(page.url()).pathname;

/** No sideways scroll at 390 px nor on a desktop, and no serious axe finding in light or dark. */
const checkPage = (name: string) => checkConsolePage(page, name, { photo: name });

/** Submits an action's form; when its proof is old, proves the factor again and submits once more. */
async function act(selector: string): Promise<void> {
  await submit(selector);
  if (pathname() !== '/admin/reauthenticate') return;
  await reauthenticateInBrowser(page, t, operator);
  await submit(selector);
}

describe.skipIf(skipBrowserTests)('the console users pages, in Chromium', () => {
  beforeAll(async () => {
    stage = await openConsoleStage();
    ({ t, base, page } = stage);
    operator = await makeOperator(t, 'owner', { username: 'users_owner' });
    hatter = await makeUser(t, {
      username: 'mad_hatter',
      email: 'hatter@teaparty.example',
      displayName: 'The Hatter',
    });
    const now = t.clock.now();
    await insertSession(t.database.db, {
      idHash: hashSecret('a browser session of the hatter'),
      userId: hatter.id,
      authTime: now,
      amr: ['pwd'],
      createdAt: now,
      expiresAt: new Date(now.getTime() + 3600_000),
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
      ip: '198.51.100.23',
    });
    await enterConsoleInBrowser(page, base, t, operator, '/admin/users');
  }, 120_000);

  afterAll(async () => {
    await stage?.close();
  }, 60_000);

  it('finds a user by a part of the address and opens their page', async () => {
    expect(await page.locator('h1').textContent()).toBe('Users');
    await page.locator('#user-search').fill('teaparty');
    await submit('form[role="search"] button[type="submit"]');
    expect(new URL(page.url()).searchParams.get('q')).toBe('teaparty');
    const row = page.locator('.users-table tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain('hatter@teaparty.example');
    await checkPage('console-users-en');
    await submit(`a[href="/admin/users/${hatter.id}"]`);
    expect(pathname()).toBe(`/admin/users/${hatter.id}`);
    expect(await page.locator('h1').textContent()).toBe('mad_hatter');
    // Where and when: the address, the browser, and the sign-in's minute in UTC.
    const sessions = await page
      .locator('section[aria-labelledby="user-sessions"] tbody tr')
      .first()
      .textContent();
    expect(sessions).toContain('198.51.100.23');
    expect(sessions).toContain('Firefox/140.0');
    expect(sessions).toContain(`${t.clock.now().toISOString().slice(0, 10)} `);
    expect(sessions).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    await checkPage('console-user-en');
  });

  it('credits the wallet with a reason, and shows a debit beyond the balance refused', async () => {
    await page.locator('#wallet-amount').fill('12.50');
    await page.locator('#wallet-reason').fill('Refund of the lost hat');
    await act('.users-wallet-form button:not([formaction])');
    expect(new URL(page.url()).searchParams.get('done')).toBe('credited');
    expect(await page.locator('p.notice[role="status"]').textContent()).toBe('The wallet is credited.');
    expect(await page.locator('section[aria-labelledby="user-premium"]').textContent()).toContain(
      'Refund of the lost hat',
    );
    expect((await getBalance(t.database.db, hatter.id)).balance).toBe(12.5);

    await page.locator('#wallet-amount').fill('20');
    await page.locator('#wallet-reason').fill('Too much');
    await act('.users-wallet-form button[formaction]');
    expect(await page.locator('#user-refused').textContent()).toBe(
      'The balance is lower than that amount: nothing was taken.',
    );
    expect(await page.locator('#wallet-amount').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#wallet-amount').inputValue()).toBe('20');
    expect((await getBalance(t.database.db, hatter.id)).balance).toBe(12.5);
    await checkPage('console-user-refused-en');
  });

  it("does every other action of a user's page from its buttons, each shown done and true in the database", async () => {
    const { user: dormouse } = await makeTotpUser(t, {
      username: 'dormouse',
      email: 'dormouse@teaparty.example',
      emailVerified: false,
    });
    const row = () =>
      t.database.db
        .selectFrom('users')
        .select(['email_verified', 'disabled_at', 'deleted_at'])
        .where('id', '=', dormouse.id)
        .executeTakeFirstOrThrow();
    const userPage = `${base}/admin/users/${dormouse.id}`;
    const press = async (action: string) => {
      await page.goto(userPage);
      await act(`form[action="/admin/users/${dormouse.id}/${action}"] button[type="submit"]`);
      expect(new URL(page.url()).searchParams.get('done'), action).toBeTruthy();
      expect(await page.locator('p.notice[role="status"]').count(), action).toBe(1);
    };
    await press('verify-email');
    expect((await row()).email_verified).toBe(true);
    await press('premium');
    expect(await page.locator('section[aria-labelledby="user-premium"]').textContent()).not.toContain(
      'Never premium',
    );
    await press('reset-second-factors');
    expect(await secondFactorsOf(t.database.db, dormouse.id)).toEqual({ totp: false, passkey: false });
    await press('send-reset');
    const sent = await t.database.db
      .selectFrom('mail_outbox')
      .select('id')
      .where('recipient', '=', 'dormouse@teaparty.example')
      .execute();
    expect(sent.length).toBeGreaterThan(0);
    await press('sign-out');
    await press('disable');
    expect((await row()).disabled_at).not.toBeNull();
    await press('enable');
    expect((await row()).disabled_at).toBeNull();
    await page.goto(userPage);
    await page.locator('#delete-confirm').fill('dormouse');
    await act(`form[action="/admin/users/${dormouse.id}/delete"] button[type="submit"]`);
    expect((await row()).deleted_at).not.toBeNull();
  });

  it('speaks Russian, at 390 px, light and dark', async () => {
    await page.goto(`${base}/admin/users?q=hatter&lang=ru`);
    expect(await page.locator('h1').textContent()).toBe('Пользователи');
    expect(await page.locator('label[for="user-search"]').textContent()).toBe('Найти пользователя');
    await checkPage('console-users-ru');
    await page.goto(`${base}/admin/users/${hatter.id}?lang=ru`);
    expect(await page.locator('#user-factors').textContent()).toBe('Второй фактор и ключи доступа');
    expect(await page.locator('#user-actions').textContent()).toBe('Действия');
    await checkPage('console-user-ru');
    await page.goto(`${base}/admin/users?lang=en`);
  });
});
