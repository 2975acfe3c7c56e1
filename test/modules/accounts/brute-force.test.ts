import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../../src/modules/accounts/accounts.service.js';
import { verifySecondFactor } from '../../../src/modules/mfa/second-factor.service.js';
import {
  confirmTotpEnrolment,
  startTotpEnrolment,
  totpKeyOf,
} from '../../../src/modules/mfa/totp.service.js';
import { totpCodeAt } from '../../../src/modules/mfa/totp-code.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser } from '../../helpers/browser.js';
import { depsOf, makeUser } from '../../helpers/factories.js';
import { officialAppOn } from '../../helpers/mobile-app.js';

/*
 * Brute force: every check of an account's password takes a numbered slot in the database first,
 * so at most SIGN_IN_MAX_ATTEMPTS checks run per window, however many arrive in parallel; a locked
 * account answers like a wrong password; the sign-in page and the mobile app share the count.
 */

const WINDOW_SECONDS = 600;
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    env: {
      SIGN_IN_MAX_ATTEMPTS: '3',
      SIGN_IN_WINDOW_SECONDS: String(WINDOW_SECONDS),
    },
  });
});
afterAll(() => t.close());

const signIn = (username: string, password: string) =>
  authenticate(t.database.db, { clock: t.clock, config: t.config }, { username, password });

async function signInPage(username: string, password: string, browser = new Browser(t.app)): Promise<string> {
  const res = await browser.submit('/signin', '/signin', { username, password });
  if (res.statusCode === 303) return 'signed in';
  expect(res.statusCode).toBe(401);
  return /Wrong username or password\./.test(res.body) ? 'wrong' : res.body;
}

/** The official app on a phone with its own key: `verify(deviceId, username, password)` through the mobile routes. */
const officialApp = () => officialAppOn(t);

describe('the sign-in page', () => {
  it('locks an account after the allowed failures, with the answer of a wrong password, until the window ends', async () => {
    const user = await makeUser(t);
    const start = t.clock.now();
    try {
      for (let i = 0; i < 3; i++) expect(await signInPage(user.username, 'wrong password')).toBe('wrong');
      // Locked: even the right password gets the wrong-password answer.
      expect(await signInPage(user.username, user.password)).toBe('wrong');
      t.clock.advance(WINDOW_SECONDS * 1000 - 1000);
      expect(await signInPage(user.username, user.password)).toBe('wrong');
      t.clock.advance(2000);
      expect(await signInPage(user.username, user.password)).toBe('signed in');
    } finally {
      t.clock.set(start);
    }
  });

  it('starts counting again after a successful sign-in', async () => {
    const user = await makeUser(t);
    for (let i = 0; i < 2; i++) expect(await signInPage(user.username, 'wrong password')).toBe('wrong');
    expect(await signInPage(user.username, user.password)).toBe('signed in');
    for (let i = 0; i < 2; i++) expect(await signInPage(user.username, 'wrong password')).toBe('wrong');
    expect(await signInPage(user.username, user.password)).toBe('signed in');
  });

  it('does not lock anyone out through an unknown username', async () => {
    for (let i = 0; i < 5; i++) expect(await signInPage('no_such_user', 'guess')).toBe('wrong');
  });
});

describe('parallel guesses', () => {
  it('are counted one by one: 20 at once take 20 numbered slots, and the account ends locked', async () => {
    const user = await makeUser(t);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => signIn(user.username, `guess ${i}`)),
    );
    expect(results.every((result) => !result.ok)).toBe(true);
    const row = await t.database.db
      .selectFrom('sign_in_attempts')
      .select('attempts')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBe(20);
    expect(await signIn(user.username, user.password)).toEqual({
      ok: false,
      reason: 'wrong_credentials',
    });
  });

  it('never let more than the allowed checks through, even with the right password among them', async () => {
    const user = await makeUser(t);
    // Three wrong guesses use up the window; then the right password arrives in parallel with more.
    for (let i = 0; i < 3; i++) await signIn(user.username, `guess ${i}`);
    const results = await Promise.all([
      signIn(user.username, user.password),
      ...Array.from({ length: 5 }, (_, i) => signIn(user.username, `late ${i}`)),
    ]);
    expect(results.filter((result) => result.ok)).toHaveLength(0);
  });
});

describe('the mobile app shares the count', () => {
  it('wrong passwords through mobile verify lock the sign-in page too', async () => {
    const user = await makeUser(t);
    const verify = await officialApp();
    for (let i = 0; i < 3; i++) {
      const res = await verify('brute-force-device', user.username, 'wrong password');
      expect(res.json()).toMatchObject({ error: 'invalid_grant' });
    }
    expect(await signInPage(user.username, user.password)).toBe('wrong');
  });
});

describe('an account with a second factor: a right password gives no new guesses at a code, at any door', () => {
  it('24 wrong codes with the right password between them, on the mobile API and the other doors, stop at the budget', async () => {
    const { db, ctx } = depsOf(t);
    const user = await makeUser(t);
    await startTotpEnrolment(db, ctx, { userId: user.id, ip: null });
    const key = (await totpKeyOf(db, ctx, user.id))?.key as string;
    const enrolment = {
      userId: user.id,
      code: totpCodeAt(key, t.clock.now()),
      ip: null,
      locale: 'en' as const,
    };
    expect((await confirmTotpEnrolment(db, ctx, enrolment)).ok).toBe(true);
    t.clock.advance(30_000);
    const code = (value: string) =>
      verifySecondFactor(db, ctx, { userId: user.id, code: value, ip: null, locale: 'en' });
    const phone = await officialApp();

    // The rhythm: a code, the password again, a code, the password again... In a budget of 3,
    // each right password used to clear the count, so that every code was checked.
    for (let round = 0; round < 12; round++) {
      expect((await code('000000')).ok).toBe(false);
      // The mobile app: the right password starts a second step, and clears nothing.
      const mobile = await phone(`second-factor-phone-${round}`, user.username, user.password);
      if (round === 0) expect(mobile.json()).toMatchObject({ error: 'mfa_required' });
      expect((await code('000000')).ok).toBe(false);
      // Every other door that checks a password (password, e-mail, deletion, re-authentication) calls this.
      await signIn(user.username, user.password);
    }
    const checked = await t.database.db
      .selectFrom('audit_events')
      .select('details')
      .where('subject', '=', `user:${user.id}`)
      .where('action', '=', 'second_factor_failed')
      .execute();
    expect(checked).toHaveLength(24);
    expect(checked.filter((event) => event.details.locked === false)).toHaveLength(2);
    // The budget is spent: the right code is not even checked until the window ends.
    expect((await code(totpCodeAt(key, t.clock.now()))).ok).toBe(false);
    t.clock.advance(WINDOW_SECONDS * 1000 + 1000);
    expect((await code(totpCodeAt(key, t.clock.now()))).ok).toBe(true);
  });
});

describe("a stranger's failures do not lock the owner out (device cookies)", () => {
  it("the owner's browser keeps its own budget; any other browser is locked", async () => {
    const user = await makeUser(t);
    const owners = new Browser(t.app);
    expect(await signInPage(user.username, user.password, owners)).toBe('signed in');
    expect([...owners.cookies.keys()]).toContain('idp_device');

    for (let i = 0; i < 3; i++) expect(await signInPage(user.username, `guess ${i}`)).toBe('wrong');
    // Strangers are locked out, even with the right password...
    expect(await signInPage(user.username, user.password)).toBe('wrong');
    // ...the owner's browser is not.
    expect(await signInPage(user.username, user.password, owners)).toBe('signed in');
  });

  it("a browser's own failures lock that browser only, and its cookie counts only for its account", async () => {
    const user = await makeUser(t);
    const other = await makeUser(t);
    const browser = new Browser(t.app);
    expect(await signInPage(user.username, user.password, browser)).toBe('signed in');
    for (let i = 0; i < 3; i++) expect(await signInPage(user.username, `guess ${i}`, browser)).toBe('wrong');
    expect(await signInPage(user.username, user.password, browser)).toBe('wrong');
    // A fresh browser is in the untrusted budget, which this browser did not use.
    expect(await signInPage(user.username, user.password)).toBe('signed in');
    // For another account this browser is a stranger: its failures use that account's shared budget.
    for (let i = 0; i < 3; i++) expect(await signInPage(other.username, `guess ${i}`, browser)).toBe('wrong');
    expect(await signInPage(other.username, other.password)).toBe('wrong');
  });

  it('a forged or altered device cookie is no device cookie', async () => {
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    for (let i = 0; i < 4; i++) expect(await signInPage(user.username, `guess ${i}`)).toBe('wrong');
    browser.cookies.set('idp_device', encodeURIComponent(`${user.id}.AAAAAAAAAAAAAAAAAAAAAA.forged`));
    expect(await signInPage(user.username, user.password, browser)).toBe('wrong');
  });

  it("the app's registered device keeps its own budget at mobile verify", async () => {
    const user = await makeUser(t);
    const phone = await officialApp();
    const verify = (deviceId: string, password: string) => phone(deviceId, user.username, password);
    expect((await verify('owners-phone-1', user.password)).statusCode).toBe(200);
    for (let i = 0; i < 4; i++) expect(await signInPage(user.username, `guess ${i}`)).toBe('wrong');
    expect((await verify('another-phone-1', user.password)).statusCode).toBe(400);
    expect((await verify('owners-phone-1', user.password)).statusCode).toBe(200);
  });
});

describe('unknown and known accounts look the same', () => {
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

  it('by status and body, and by time: no failure is answered more slowly than another', async () => {
    const user = await makeUser(t);
    const known: number[] = [];
    const unknown: number[] = [];
    const bodies = new Set<string>();
    // Interleaved, and well past the allowed failures, where answers used to slow down.
    for (let i = 0; i < 7; i++) {
      for (const [username, times] of [
        [user.username, known],
        ['nobody_here_at_all', unknown],
      ] as const) {
        const started = performance.now();
        const result = await signIn(username, `guess ${i}`);
        times.push(performance.now() - started);
        bodies.add(JSON.stringify(result));
      }
    }
    expect([...bodies]).toEqual([JSON.stringify({ ok: false, reason: 'wrong_credentials' })]);
    // One argon2 verify each way (tens of ms); a slowdown for known accounts was 0.5–5 s per answer.
    expect(median(known)).toBeLessThan(median(unknown) * 2 + 100);
  });
});
