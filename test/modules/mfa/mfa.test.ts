import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from '../../../src/lib/sealed-secret.js';
import { deleteAccount } from '../../../src/modules/accounts/account-deletion.service.js';
import { findCredentials } from '../../../src/modules/accounts/accounts.repository.js';
import { renewRecoveryCodes } from '../../../src/modules/mfa/recovery-codes.service.js';
import {
  hasSecondFactor,
  resetSecondFactors,
  verifySecondFactor,
} from '../../../src/modules/mfa/second-factor.service.js';
import {
  confirmTotpEnrolment,
  disableTotp,
  startTotpEnrolment,
} from '../../../src/modules/mfa/totp.service.js';
import { totpCodeAt } from '../../../src/modules/mfa/totp-code.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { depsOf, makeUser, type TestUser } from '../../helpers/factories.js';
import { makeTotpUser } from '../../helpers/totp.js';

/** TOTP, recovery codes and the second-step check, on the real database. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { SIGN_IN_MAX_ATTEMPTS: '5' } });
});
afterAll(() => t.close());

const origin = { ip: '203.0.113.9', locale: 'en' as const };
const ctx = () => depsOf(t).ctx;
const db = () => t.database.db;
const STEP_MS = 30_000;

/** A user with TOTP on: the key (as an app holds it) and the recovery codes; the next code is unused. */
const enrolled = () => makeTotpUser(t);

const check = (user: TestUser, code: string) =>
  verifySecondFactor(db(), ctx(), { userId: user.id, code, ...origin });

describe('TOTP', () => {
  it('stores the key sealed, never in plain text, and opens it with COOKIE_SECRET only', async () => {
    const { user, key } = await enrolled();
    const row = await db()
      .selectFrom('totp_credentials')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_sealed).not.toContain(key);
    expect(JSON.stringify(row)).not.toContain(key);
    expect(open(row.secret_sealed, [t.config.COOKIE_SECRET], 'totp-key')).toBe(key);
    expect(open(row.secret_sealed, ['x'.repeat(32)], 'totp-key')).toBeNull();
    expect(row.confirmed_at).not.toBeNull();
  });

  it('after a rotation of COOKIE_SECRET, a key opens with the former secret and moves to the new one', async () => {
    const { user, key } = await enrolled();
    const former = t.config.COOKIE_SECRET;
    const rotated = {
      ...ctx(),
      config: { ...t.config, COOKIE_SECRET: 'n'.repeat(40), COOKIE_SECRET_PREVIOUS: [former] },
    };
    const use = (c: typeof rotated, at: Date) =>
      verifySecondFactor(db(), c, { userId: user.id, code: totpCodeAt(key, at), ...origin });
    expect((await use(rotated, t.clock.now())).ok).toBe(true);
    const row = await db()
      .selectFrom('totp_credentials')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(open(row.secret_sealed, ['n'.repeat(40)], 'totp-key')).toBe(key);
    expect(open(row.secret_sealed, [former], 'totp-key')).toBeNull();
    // The former secret can now go.
    t.clock.advance(STEP_MS);
    const after = { ...rotated, config: { ...rotated.config, COOKIE_SECRET_PREVIOUS: [] } };
    expect((await use(after, t.clock.now())).ok).toBe(true);
  });

  it('a pending enrolment is no second factor, and a wrong first code confirms nothing', async () => {
    const user = await makeUser(t);
    await startTotpEnrolment(db(), ctx(), { userId: user.id, ip: null });
    expect(await hasSecondFactor(db(), user.id)).toBe(false);
    const wrong = await confirmTotpEnrolment(db(), ctx(), { userId: user.id, code: '000000', ...origin });
    expect(wrong.ok).toBe(false);
    expect(await hasSecondFactor(db(), user.id)).toBe(false);
  });

  it('accepts the code of the step before and after, not two steps away (RFC 6238, ±1 step)', async () => {
    const { user, key } = await enrolled();
    // Clear of the step the enrolment used, so that the step before now is still unused.
    t.clock.advance(STEP_MS);
    const now = t.clock.now().getTime();
    expect(await check(user, totpCodeAt(key, new Date(now - 2 * STEP_MS)))).toEqual({ ok: false });
    expect(await check(user, totpCodeAt(key, new Date(now - STEP_MS)))).toEqual({ ok: true, method: 'totp' });
    expect(await check(user, totpCodeAt(key, new Date(now + 2 * STEP_MS)))).toEqual({ ok: false });
    expect(await check(user, totpCodeAt(key, new Date(now + STEP_MS)))).toEqual({ ok: true, method: 'totp' });
  });

  it('accepts a code once: replayed, or sent twice at the same time, it passes once', async () => {
    const { user, key } = await enrolled();
    const code = totpCodeAt(key, t.clock.now());
    expect((await check(user, code)).ok).toBe(true);
    expect((await check(user, code)).ok).toBe(false);
    t.clock.advance(STEP_MS);
    const next = totpCodeAt(key, t.clock.now());
    const results = await Promise.all([check(user, next), check(user, next), check(user, next)]);
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    // An older step than the last used one is refused too.
    expect((await check(user, totpCodeAt(key, new Date(t.clock.now().getTime() - STEP_MS)))).ok).toBe(false);
  });

  it('is not replaced while on, and disabling removes it with the recovery codes', async () => {
    const { user } = await enrolled();
    expect(await startTotpEnrolment(db(), ctx(), { userId: user.id, ip: null })).toBe(false);
    expect(await disableTotp(db(), ctx(), { userId: user.id, ...origin })).toBe(true);
    expect(await hasSecondFactor(db(), user.id)).toBe(false);
    const left = await db().selectFrom('recovery_codes').where('user_id', '=', user.id).selectAll().execute();
    expect(left).toEqual([]);
    const mail = await db().selectFrom('mail_outbox').where('user_id', '=', user.id).select('kind').execute();
    expect(mail.map((m) => m.kind).sort()).toEqual(['totp_disabled', 'totp_enabled']);
  });
});

describe('recovery codes', () => {
  it('10 codes, stored hashed, each passing once', async () => {
    const { user, codes } = await enrolled();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    const rows = await db().selectFrom('recovery_codes').where('user_id', '=', user.id).selectAll().execute();
    expect(rows).toHaveLength(10);
    for (const row of rows)
      for (const code of codes) expect(row.code_hash).not.toContain(code.replaceAll('-', ''));
    const first = codes[0] as string;
    expect(await check(user, first.toUpperCase().replaceAll('-', ' '))).toEqual({
      ok: true,
      method: 'recovery_code',
    });
    expect((await check(user, first)).ok).toBe(false);
    const parallel = await Promise.all([check(user, codes[1] as string), check(user, codes[1] as string)]);
    expect(parallel.filter((result) => result.ok)).toHaveLength(1);
    const events = await db()
      .selectFrom('audit_events')
      .where('actor', '=', `user:${user.id}`)
      .where('action', '=', 'recovery_code_used')
      .selectAll()
      .execute();
    expect(events).toHaveLength(2);
  });

  it('renewal replaces all of them', async () => {
    const { user, codes } = await enrolled();
    const renewed = (await renewRecoveryCodes(db(), ctx(), { userId: user.id, ...origin })) as string[];
    expect(renewed).toHaveLength(10);
    expect((await check(user, codes[0] as string)).ok).toBe(false);
    expect((await check(user, renewed[0] as string)).ok).toBe(true);
    const mail = await db().selectFrom('mail_outbox').where('user_id', '=', user.id).select('kind').execute();
    expect(mail.map((m) => m.kind)).toEqual(
      expect.arrayContaining(['totp_enabled', 'recovery_codes_renewed', 'recovery_code_used']),
    );
  });
});

describe('the sign-in limits', () => {
  it('20 parallel wrong codes never run more checks than the limit; the right code is then refused', async () => {
    const { user, key } = await enrolled();
    const wrong = totpCodeAt(key, new Date(t.clock.now().getTime() + 10 * STEP_MS));
    const results = await Promise.all(Array.from({ length: 20 }, () => check(user, wrong)));
    expect(results.every((result) => !result.ok)).toBe(true);
    const events = await db()
      .selectFrom('audit_events')
      .where('actor', '=', `user:${user.id}`)
      .where('action', '=', 'second_factor_failed')
      .select('details')
      .execute();
    const checked = events.filter((event) => (event.details as { locked: boolean }).locked === false);
    expect(events).toHaveLength(20);
    expect(checked.length).toBeLessThanOrEqual(5);
    // Past the limit nothing is checked: the right code and a recovery code fail too.
    expect((await check(user, totpCodeAt(key, t.clock.now()))).ok).toBe(false);
    // A new window: the right code passes.
    t.clock.advance(t.config.SIGN_IN_WINDOW_SECONDS * 1000 + 1);
    expect((await check(user, totpCodeAt(key, t.clock.now()))).ok).toBe(true);
  });

  it('a right password does not start the count again for an account with a second factor', async () => {
    const { user } = await enrolled();
    for (let i = 0; i < 5; i++) expect((await check(user, '000000')).ok).toBe(false);
    const { authenticate } = await import('../../../src/modules/accounts/accounts.service.js');
    const signIn = await authenticate(db(), ctx(), { username: user.username, password: user.password });
    // The budget is spent: the password is not even checked.
    expect(signIn.ok).toBe(false);
  });
});

describe('resets and deletion', () => {
  it('idp users mfa-reset removes TOTP and the recovery codes, audited', async () => {
    const { user } = await enrolled();
    const reset = await resetSecondFactors(db(), ctx(), { username: user.username, actor: 'cli' });
    expect(reset.totpRemoved).toBe(true);
    expect(await hasSecondFactor(db(), user.id)).toBe(false);
    expect(
      await db().selectFrom('recovery_codes').where('user_id', '=', user.id).selectAll().execute(),
    ).toEqual([]);
    await expect(
      resetSecondFactors(db(), ctx(), { username: 'nobody_here', actor: 'cli' }),
    ).rejects.toThrow();
  });

  it('deleting the account deletes its TOTP key and recovery codes', async () => {
    const { user } = await enrolled();
    const credentials = await findCredentials(db(), user.username.toLowerCase());
    expect(credentials).toBeDefined();
    const result = await deleteAccount(db(), ctx(), { userId: user.id, password: user.password, ip: null });
    expect(result.ok).toBe(true);
    expect(
      await db().selectFrom('totp_credentials').where('user_id', '=', user.id).selectAll().execute(),
    ).toEqual([]);
    expect(
      await db().selectFrom('recovery_codes').where('user_id', '=', user.id).selectAll().execute(),
    ).toEqual([]);
  });
});
