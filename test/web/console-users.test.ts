import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUserById } from '../../src/modules/accounts/accounts.repository.js';
import { getBalance } from '../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser } from '../helpers/browser.js';
import { type ConsoleSession, enterConsole, makeOperator } from '../helpers/console.js';
import { usingPostgres } from '../helpers/database.js';
import { makeUser, type TestUser } from '../helpers/factories.js';
import { unescapeHtml } from '../helpers/html.js';

/*
 * GET /admin/users (search) and /admin/users/:id (the user's page), and the actions' POST routes:
 * who may do what (owner everything, support no wallet, auditor nothing), the redirect back with
 * ?done=, a refusal shown on the page and changing nothing, CSRF and the recent-proof rule.
 */

let t: TestApp;
let owner: ConsoleSession;
let support: ConsoleSession;
let auditor: ConsoleSession;
let alice: TestUser;

const text = (body: string) => unescapeHtml(body.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

beforeAll(async () => {
  t = await createTestApp();
  owner = await enterConsole(t, await makeOperator(t, 'owner', { username: 'olga_owner' }));
  support = await enterConsole(t, await makeOperator(t, 'support', { username: 'sam_support' }));
  auditor = await enterConsole(t, await makeOperator(t, 'auditor', { username: 'ann_auditor' }));
  alice = await makeUser(t, {
    username: 'alice_liddell',
    email: 'alice@wonder.example',
    emailVerified: false,
  });
});
afterAll(() => t.close());

const userPage = (id: number) => `/admin/users/${id}`;

describe(`the console's users on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('sends a browser without a session to sign in', async () => {
    const res = await new Browser(t.app).get('/admin/users?q=alice');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/signin?return_to=%2Fadmin%2Fusers%3Fq%3Dalice');
  });

  it('finds a user by a part of the address and links to their page', async () => {
    const res = await auditor.get('/admin/users?q=wonder.example');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain(`href="/admin/users/${alice.id}"`);
    expect(text(res.body)).toContain('alice@wonder.example (not verified)');
    expect(text(res.body)).toContain('Active');
  });

  it('answers a term with control characters or of any length as a search, never an error', async () => {
    for (const q of ['%1B%5B2J', 'ali%07ce', 'x'.repeat(4000), '%25_%5C']) {
      const res = await auditor.get(`/admin/users?q=${q}&page=99999999`);
      expect(res.statusCode, q).toBe(200);
    }
    expect((await auditor.get('/admin/users?q=ali%07ce')).body).toContain(`href="/admin/users/${alice.id}"`);
    // NUL is refused before any route, as everywhere (src/http/input-guard.ts).
    expect((await auditor.get('/admin/users?q=%00')).statusCode).toBe(400);
  });

  it('shows the newest accounts without a term, and no match as a status', async () => {
    expect(text((await auditor.get('/admin/users')).body)).toContain('The newest accounts.');
    const none = await auditor.get('/admin/users?q=zzzz_nobody');
    expect(none.body).toMatch(/<p role="status">No user matches\.<\/p>/);
  });

  it("shows a user's page; an unknown or malformed id is a 404 page", async () => {
    const res = await auditor.get(userPage(alice.id));
    expect(res.statusCode).toBe(200);
    const page = text(res.body);
    for (const heading of [
      'Profile',
      'Second factors and passkeys',
      'Browser sessions',
      'Apps allowed',
      'Premium',
      'Wallet',
      'Latest events',
    ])
      expect(page).toContain(heading);
    expect(res.body).toContain('href="/admin/audit?user=alice_liddell"');
    expect((await auditor.get('/admin/users/99999999')).statusCode).toBe(404);
    expect((await auditor.get('/admin/users/abc')).statusCode).toBe(404);
  });

  it('offers an auditor no action, and refuses every POST of theirs (403)', async () => {
    const page = await auditor.get(userPage(alice.id));
    expect(page.body).not.toContain(`action="${userPage(alice.id)}/disable"`);
    for (const action of [
      'disable',
      'enable',
      'sign-out',
      'reset-second-factors',
      'send-reset',
      'verify-email',
      'premium',
      'wallet/credit',
      'wallet/debit',
      'delete',
    ]) {
      const res = await auditor.post(`${userPage(alice.id)}/${action}`, {
        amount: '1',
        reason: 'r',
        period: 'month',
        days: '1',
        confirm: alice.username,
      });
      expect(res.statusCode, action).toBe(403);
    }
    expect((await findUserById(t.database.db, alice.id))?.disabledAt).toBeNull();
  });

  it('lets support act on users but not on the wallet', async () => {
    const page = await support.get(userPage(alice.id));
    expect(page.body).toContain(`action="${userPage(alice.id)}/sign-out"`);
    expect(page.body).not.toContain('/wallet/credit');
    const credit = await support.post(`${userPage(alice.id)}/wallet/credit`, { amount: '5', reason: 'gift' });
    expect(credit.statusCode).toBe(403);
    expect((await getBalance(t.database.db, alice.id)).balance).toBe(0);
    const verified = await support.post(`${userPage(alice.id)}/verify-email`);
    expect(verified.statusCode).toBe(303);
    expect(verified.headers.location).toBe(`${userPage(alice.id)}?done=email_verified`);
    expect((await findUserById(t.database.db, alice.id))?.emailVerified).toBe(true);
  });

  it('disables and enables, redirecting back with a status message', async () => {
    const res = await owner.post(`${userPage(alice.id)}/disable`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${userPage(alice.id)}?done=disabled`);
    const page = await owner.get(res.headers.location as string);
    expect(page.body).toMatch(/<p class="notice" role="status">The account is disabled\.<\/p>/);
    expect(page.body).toContain(`action="${userPage(alice.id)}/enable"`);
    expect((await owner.post(`${userPage(alice.id)}/enable`)).statusCode).toBe(303);
    expect((await findUserById(t.database.db, alice.id))?.disabledAt).toBeNull();
  });

  it('credits, then refuses a debit beyond the balance on the page (409), changing nothing', async () => {
    const credited = await owner.post(`${userPage(alice.id)}/wallet/credit`, {
      amount: '10',
      reason: 'Refund 42',
    });
    expect(credited.headers.location).toBe(`${userPage(alice.id)}?done=credited`);
    const refused = await owner.post(`${userPage(alice.id)}/wallet/debit`, {
      amount: '10.01',
      reason: 'Oops',
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('The balance is lower than that amount: nothing was taken.');
    expect(refused.body).toMatch(/id="wallet-amount"[^>]*value="10\.01"[^>]*aria-invalid="true"/);
    expect((await getBalance(t.database.db, alice.id)).balance).toBe(10);
    const bad = await owner.post(`${userPage(alice.id)}/wallet/credit`, { amount: 'lots', reason: 'x' });
    expect(bad.statusCode).toBe(400);
    const page = text((await owner.get(userPage(alice.id))).body);
    expect(page).toContain('Refund 42');
    expect(page).toContain('olga_owner (operator, Owner)');
  });

  it('grants premium, and refuses a bad number of days (400)', async () => {
    const res = await owner.post(`${userPage(alice.id)}/premium`, { period: 'year', days: '365' });
    expect(res.headers.location).toBe(`${userPage(alice.id)}?done=premium_granted`);
    expect(
      (await owner.post(`${userPage(alice.id)}/premium`, { period: 'year', days: '0' })).statusCode,
    ).toBe(400);
  });

  it('refuses a POST without the CSRF token (403)', async () => {
    const res = await owner.browser.post(`${userPage(alice.id)}/disable`, {});
    expect(res.statusCode).toBe(403);
    expect((await findUserById(t.database.db, alice.id))?.disabledAt).toBeNull();
  });

  it('sends a destructive POST to re-authenticate once the proof is old, changing nothing', async () => {
    t.clock.advance(10 * 60 * 1000);
    const res = await owner.post(`${userPage(alice.id)}/disable`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toMatch(/^\/admin\/reauthenticate\?return_to=%2Fadmin%2Fusers%2F\d+/);
    expect((await findUserById(t.database.db, alice.id))?.disabledAt).toBeNull();
    await owner.reauthenticate();
  });

  it('deletes only with the username typed', async () => {
    const bob = await makeUser(t, { username: 'bob_to_delete' });
    const wrong = await owner.post(`${userPage(bob.id)}/delete`, { confirm: 'alice_liddell' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('The username typed does not match: nothing was deleted.');
    const res = await owner.post(`${userPage(bob.id)}/delete`, { confirm: 'BOB_to_delete' });
    expect(res.headers.location).toBe(`${userPage(bob.id)}?done=deleted`);
    const page = await owner.get(userPage(bob.id));
    expect(text(page.body)).toContain('Deleted');
    expect(page.body).not.toContain(`action="${userPage(bob.id)}/delete"`);
  });

  it('speaks Russian', async () => {
    const res = await auditor.get(`${userPage(alice.id)}?lang=ru`);
    expect(text(res.body)).toContain('Второй фактор и ключи доступа');
    expect(text((await auditor.get('/admin/users?q=alice&lang=ru')).body)).toContain('Найти пользователя');
  });
});
