import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../src/modules/mfa/totp-code.js';
import { grantRole } from '../../src/modules/operators/operators.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser } from '../helpers/browser.js';
import type { TestUser } from '../helpers/factories.js';
import { officialAppOn } from '../helpers/mobile-app.js';
import { makeTotpUser } from '../helpers/totp.js';

/*
 * One sign-in policy at every door (docs/pages.md "Second factor"): for an account with a second
 * factor, a right password clears no count of failed checks, whichever door checks it — the
 * sign-in page, the mobile app's verify, re-authentication, the password change, the e-mail change,
 * turning the authenticator app off. Someone who holds the password and a copied session cookie
 * (no device cookie: the budget of browsers that never signed in) walks each door in turn between
 * wrong codes; the codes stay bounded by SIGN_IN_MAX_ATTEMPTS. The console's door checks codes
 * in the same budget.
 */

const usingPostgres = Boolean(process.env.TEST_DATABASE_URL);
const MAX_ATTEMPTS = 5;
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    env: { SIGN_IN_MAX_ATTEMPTS: String(MAX_ATTEMPTS), SIGN_IN_WINDOW_SECONDS: '600' },
  });
});
afterAll(() => t.close());

interface Account {
  user: TestUser;
  key: string;
  /** The owner's browser, signed in with the password and a code. */
  owner: Browser;
  /** Another browser with a copy of the owner's session cookie, and nothing else. */
  thief: Browser;
}

const code = (key: string) => totpCodeAt(key, t.clock.now());

async function accountWithAuthenticator(): Promise<Account> {
  const { user, key } = await makeTotpUser(t);
  const owner = new Browser(t.app);
  expect((await owner.signIn(user)).headers.location).toMatch(/^\/signin\/second-factor/);
  const step = await owner.submit('/signin/second-factor', '/signin/second-factor', { code: code(key) });
  expect(step.statusCode).toBe(303);
  t.clock.advance(30_000);
  const thief = new Browser(t.app);
  thief.cookies.set('idp_session', owner.cookies.get('idp_session') as string);
  return { user, key, owner, thief };
}

/** A code entered where the session's person proves themselves again: the second-step budget's door. */
async function enterCode(browser: Browser, value: string): Promise<number> {
  const res = await browser.submit('/account/reauthenticate', '/account/reauthenticate', { code: value });
  return res.statusCode;
}

/** The app on a phone with its own key: mobile verify with the account's password. */
async function mobileVerify(user: TestUser) {
  return (await officialAppOn(t))(`door-phone-${user.id}`, user.username, user.password);
}

/** The failed checks counted against browsers that never signed in to the account. */
async function strangersCount(userId: number): Promise<number | undefined> {
  const row = await t.database.db
    .selectFrom('sign_in_attempts')
    .select('attempts')
    .where('user_id', '=', userId)
    .where('source', '=', '')
    .executeTakeFirst();
  return row?.attempts;
}

/** Each door, passed with the right password by someone holding it and a copied session cookie. */
const doors: Array<{ name: string; pass: (account: Account) => Promise<void> }> = [
  {
    name: 'the sign-in page',
    async pass({ user }) {
      const res = await new Browser(t.app).submit('/signin', '/signin', {
        username: user.username,
        password: user.password,
      });
      expect(res.headers.location).toMatch(/^\/signin\/second-factor/);
    },
  },
  {
    name: "the mobile app's verify",
    async pass({ user }) {
      const res = await mobileVerify(user);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: 'mfa_required' });
    },
  },
  {
    name: 'the re-authentication page',
    async pass({ user, thief }) {
      const res = await thief.submit('/account/reauthenticate', '/account/reauthenticate', {
        password: user.password,
      });
      expect(res.statusCode).toBe(303);
    },
  },
  {
    name: 'the password change',
    async pass({ user, thief }) {
      const next = `${user.password} and more`;
      const res = await thief.submit('/account/password', '/account/password', {
        current_password: user.password,
        new_password: next,
        password_confirm: next,
      });
      expect(res.statusCode).toBe(303);
      user.password = next;
    },
  },
  {
    name: 'the e-mail change',
    async pass({ user, thief }) {
      await reauthenticate(thief, user);
      const res = await thief.submit('/account/email', '/account/email', {
        new_email: `moved-${user.id}@example.com`,
        current_password: user.password,
      });
      expect(res.statusCode).toBe(303);
    },
  },
  {
    name: 'turning the authenticator app off',
    async pass({ user, thief }) {
      await reauthenticate(thief, user);
      const res = await thief.submit('/account/security', '/account/security/totp/disable', {
        proof: user.password,
      });
      expect(res.statusCode).toBe(303);
    },
  },
];

async function reauthenticate(browser: Browser, user: TestUser): Promise<void> {
  const res = await browser.submit('/account/reauthenticate', '/account/reauthenticate', {
    password: user.password,
  });
  expect(res.statusCode).toBe(303);
}

describe(`a right password clears no count of an account with a second factor, at any door, on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it.each(doors)('$name', async (door) => {
    const account = await accountWithAuthenticator();
    const { user, key, thief } = account;
    // Two wrong codes of the five the window allows.
    expect(await enterCode(thief, '000000')).toBe(401);
    expect(await enterCode(thief, '111111')).toBe(401);
    expect(await strangersCount(user.id)).toBe(2);

    await door.pass(account);
    // The count is still there (the password's own check took a slot where the door checks it
    // against this budget): nothing the password did gave the codes new guesses.
    expect(await strangersCount(user.id)).toBeGreaterThanOrEqual(2);

    if (door.name === 'turning the authenticator app off') return;
    // Three more wrong codes: had the password cleared the count, the right code would now be the
    // fourth check of a fresh window and pass; it is past the budget, and refused until it ends.
    for (const wrong of ['222222', '333333', '444444']) expect(await enterCode(thief, wrong)).toBe(401);
    t.clock.advance(30_000);
    expect(await enterCode(thief, code(key))).toBe(401);
  });
});

describe('the console door', () => {
  it('counts its codes in the same budget: the right code is refused once wrong ones spent the window', async () => {
    const account = await accountWithAuthenticator();
    const { user, key, thief } = account;
    await grantRole(
      t.database.db,
      { config: t.config, clock: t.clock },
      { username: user.username, role: 'owner', by: 'operator' },
    );
    // One wrong code at re-authentication, four at the console's door: the window's five.
    expect(await enterCode(thief, '000000')).toBe(401);
    for (const wrong of ['111111', '222222', '333333', '444444'])
      expect((await thief.submit('/admin/enter', '/admin/enter', { code: wrong })).statusCode).toBe(401);
    expect(await strangersCount(user.id)).toBe(MAX_ATTEMPTS);
    t.clock.advance(30_000);
    const right = await thief.submit('/admin/enter', '/admin/enter', { code: code(key) });
    expect(right.statusCode).toBe(401);
    expect(right.body).toContain('Too many wrong codes');
    expect((await thief.get('/admin/session')).headers.location).toMatch(/^\/admin\/enter/);
  });
});
