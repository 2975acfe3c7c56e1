import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  resetPassword,
  sendPasswordResetByOperator,
} from '../../../src/modules/accounts/password-reset.service.js';
import type { TrustedSource } from '../../../src/modules/accounts/sign-in-result.js';
import { resetSecondFactors, verifySecondFactor } from '../../../src/modules/mfa/second-factor.service.js';
import { unlockSignIn } from '../../../src/modules/mfa/second-factor-lockout.js';
import { totpCodeAt } from '../../../src/modules/mfa/totp-code.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { depsOf, type TestUser } from '../../helpers/factories.js';
import { makeTotpUser } from '../../helpers/totp.js';

/*
 * Wrong second-step codes in a row, across sign-in windows (docs/pages.md "Two-step sign-in"):
 * past SECOND_FACTOR_MAX_FAILURES only a trusted source (a browser or app device that signed in
 * before) is checked, until a code passes there, a password reset or an operator ends the run;
 * the owner's confirmed address is told once per run.
 */

const WINDOW_SECONDS = 60;
const MAX_IN_A_ROW = 6;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    env: {
      SIGN_IN_MAX_ATTEMPTS: '3',
      SIGN_IN_WINDOW_SECONDS: String(WINDOW_SECONDS),
      SECOND_FACTOR_MAX_FAILURES: String(MAX_IN_A_ROW),
    },
  });
});
afterAll(() => t.close());

const db = () => t.database.db;
const ctx = () => depsOf(t).ctx;
const STEP_MS = 30_000;
const nextWindow = () => t.clock.advance(WINDOW_SECONDS * 1000 + 1000);

const enrolled = (options: { emailVerified?: boolean } = {}) => makeTotpUser(t, options);

/** The owner's browser: its device cookie names the account. */
const ownersBrowser: TrustedSource = () => 'device:owners-browser';

function check(user: TestUser, code: string, trustedSource?: TrustedSource, locale: 'en' | 'ru' = 'en') {
  return verifySecondFactor(db(), ctx(), {
    userId: user.id,
    code,
    ip: '203.0.113.7',
    locale,
    ...(trustedSource ? { trustedSource } : {}),
  });
}

/** MAX_IN_A_ROW wrong codes from strangers, spread over windows so that no window's budget stops them. */
async function wrongCodesInARow(user: TestUser, count = MAX_IN_A_ROW): Promise<void> {
  for (let i = 0; i < count; i++) {
    if (i > 0 && i % 3 === 0) nextWindow();
    expect(await check(user, '000000')).toEqual({ ok: false });
  }
  nextWindow();
}

const rightCode = (key: string) => {
  t.clock.advance(STEP_MS);
  return totpCodeAt(key, t.clock.now());
};

async function warnings(user: TestUser) {
  return db()
    .selectFrom('mail_outbox')
    .select(['recipient', 'subject', 'text_body', 'html_body', 'locale'])
    .where('user_id', '=', user.id)
    .where('kind', '=', 'second_factor_failures')
    .execute();
}

describe('wrong codes in a row, across windows', () => {
  it('past the cap, a stranger is not checked even in a fresh window: the right code fails', async () => {
    const { user, key } = await enrolled();
    await wrongCodesInARow(user);
    expect(await check(user, rightCode(key))).toEqual({ ok: false, locked: 'failures' });
    // Days later it still holds: the run ends only by a passed factor, a reset or an operator.
    t.clock.advance(3 * 24 * 3600 * 1000);
    expect(await check(user, rightCode(key))).toEqual({ ok: false, locked: 'failures' });
    const audit = await db()
      .selectFrom('audit_events')
      .select('action')
      .where('subject', '=', `user:${user.id}`)
      .where('action', '=', 'second_factor_locked')
      .execute();
    expect(audit).toHaveLength(1);
  });

  it("the owner's known browser is still checked; its right code ends the run for everyone", async () => {
    const { user, key } = await enrolled();
    await wrongCodesInARow(user);
    expect((await check(user, rightCode(key))).ok).toBe(false);
    expect(await check(user, rightCode(key), ownersBrowser)).toEqual({ ok: true, method: 'totp' });
    expect((await check(user, rightCode(key))).ok).toBe(true);
  });

  it('a right code before the cap starts the run again', async () => {
    const { user, key } = await enrolled();
    await wrongCodesInARow(user, MAX_IN_A_ROW - 1);
    expect((await check(user, rightCode(key))).ok).toBe(true);
    await wrongCodesInARow(user, MAX_IN_A_ROW - 1);
    expect((await check(user, rightCode(key))).ok).toBe(true);
  });

  it('a password reset ends it, in the transaction of the reset', async () => {
    const { user, key } = await enrolled();
    await wrongCodesInARow(user);
    expect((await check(user, rightCode(key))).ok).toBe(false);
    await sendPasswordResetByOperator(db(), ctx(), { username: user.username, locale: 'en' });
    const mail = await db()
      .selectFrom('mail_outbox')
      .select('text_body')
      .where('user_id', '=', user.id)
      .where('kind', '=', 'password_reset')
      .executeTakeFirstOrThrow();
    const token = /pr_[A-Za-z0-9_-]+/.exec(mail.text_body)?.[0] as string;
    const password = 'a brand new long password';
    const reset = await resetPassword(db(), ctx(), {
      token,
      password,
      passwordConfirm: password,
      revokeApps: false,
      ip: null,
    });
    expect(reset.ok).toBe(true);
    expect((await check(user, rightCode(key))).ok).toBe(true);
  });

  it('idp users unlock ends it, audited; idp users mfa-reset too', async () => {
    const { user, key } = await enrolled();
    await wrongCodesInARow(user);
    expect((await check(user, rightCode(key))).ok).toBe(false);
    const unlocked = await unlockSignIn(db(), ctx(), { username: user.username, actor: 'operator' });
    expect(unlocked).toEqual({ username: user.username, second_factor_failures: MAX_IN_A_ROW });
    const audit = await db()
      .selectFrom('audit_events')
      .select(['actor', 'details'])
      .where('subject', '=', `user:${user.id}`)
      .where('action', '=', 'sign_in_unlocked')
      .executeTakeFirstOrThrow();
    expect(audit.actor).toBe('operator');
    expect((await check(user, rightCode(key))).ok).toBe(true);

    await wrongCodesInARow(user);
    await resetSecondFactors(db(), ctx(), { username: user.username, actor: 'operator' });
    const left = await db()
      .selectFrom('second_factor_failures')
      .select('failures')
      .where('user_id', '=', user.id)
      .execute();
    expect(left).toEqual([]);
  });

  it('parallel wrong codes from strangers never run more checks than the cap', async () => {
    const { user, key } = await enrolled();
    await wrongCodesInARow(user, MAX_IN_A_ROW - 2);
    const results = await Promise.all(Array.from({ length: 3 }, () => check(user, '000000')));
    // Two slots were left; the third check was not run.
    expect(results.filter((result) => result.ok === false && result.locked === 'failures')).toHaveLength(1);
    nextWindow();
    expect((await check(user, rightCode(key))).ok).toBe(false);
  });
});

describe("the owner's address is told", () => {
  it('once per run, at its third wrong code, not at each one', async () => {
    const { user, key } = await enrolled();
    await wrongCodesInARow(user, 2);
    expect(await warnings(user)).toEqual([]);
    await wrongCodesInARow(user, 1);
    const [warning, ...others] = await warnings(user);
    expect(others).toEqual([]);
    expect(warning?.recipient).toBe(`${user.username}@example.com`);
    expect(warning?.subject).toBe('Wrong sign-in codes after your password');
    expect(warning?.text_body).toMatch(/wrong codes from your authenticator app/);
    expect(warning?.html_body).toMatch(/<p>.*wrong codes.*<\/p>/);
    expect(warning?.text_body).toContain(`${t.config.PUBLIC_URL}/account/security`);
    await wrongCodesInARow(user, MAX_IN_A_ROW - 3);
    expect(await warnings(user)).toHaveLength(1);
    // A new run (after a right code) may tell again.
    expect((await check(user, rightCode(key), ownersBrowser)).ok).toBe(true);
    await wrongCodesInARow(user, 3);
    expect(await warnings(user)).toHaveLength(2);
  });

  it('in Russian for a Russian page, and never to an unconfirmed address', async () => {
    const { user } = await enrolled();
    for (let i = 0; i < 3; i++) await check(user, '000000', undefined, 'ru');
    const [warning] = await warnings(user);
    expect(warning?.locale).toBe('ru');
    expect(warning?.subject).toBe('Неверные коды входа после вашего пароля');

    const unconfirmed = await enrolled({ emailVerified: false });
    for (let i = 0; i < 3; i++) await check(unconfirmed.user, '000000');
    expect(await warnings(unconfirmed.user)).toEqual([]);
  });
});
