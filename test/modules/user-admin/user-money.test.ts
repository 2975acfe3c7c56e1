import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../../src/lib/secrets.js';
import { insertSession } from '../../../src/modules/accounts/sessions.repository.js';
import type { OperatorActor } from '../../../src/modules/operators/operator-audit.js';
import { getPremiumStatus } from '../../../src/modules/premium/premium.service.js';
import { UserActionRefused } from '../../../src/modules/user-admin/user-action-refused.js';
import { userDetail } from '../../../src/modules/user-admin/user-detail.service.js';
import { grantUserPremium, moveUserCoins } from '../../../src/modules/user-admin/user-money.service.js';
import { getBalance, verifyLedger } from '../../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { depsOf, makeUser } from '../../helpers/factories.js';
import { makeTotpUser } from '../../helpers/totp.js';

/*
 * Premium and the wallet from the console (through the premium and wallet services, the move and its
 * event in one transaction), and the user's page, which shows everything but never a secret.
 */

let t: TestApp;
let actor: OperatorActor;

beforeAll(async () => {
  t = await createTestApp();
  const operator = await makeUser(t, { username: 'op_money' });
  actor = { userId: operator.id, username: operator.username, role: 'owner', ip: null };
});
afterAll(() => t.close());

const ctx = () => depsOf(t).ctx;
const db = () => t.database.db;
const eventsAbout = (userId: number) =>
  db().selectFrom('audit_events').selectAll().where('subject', '=', `user:${userId}`).orderBy('id').execute();
const balanceOf = async (userId: number) => (await getBalance(db(), userId)).balance;

async function refusal(work: Promise<unknown>): Promise<string> {
  const error = await work.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(UserActionRefused);
  return (error as UserActionRefused).reason;
}

describe('premium', () => {
  it('grants days as `idp premium grant` does, with before and after', async () => {
    const user = await makeUser(t);
    const granted = await grantUserPremium(db(), ctx(), actor, {
      userId: user.id,
      period: 'month',
      days: '30',
    });
    expect(granted.expiresAt).toBe('2026-07-01 12:00:00');
    expect((await getPremiumStatus(db(), ctx(), user.id)).active).toBe(true);
    const [event] = await eventsAbout(user.id);
    expect(event?.action).toBe('premium_granted');
    expect(event?.details).toMatchObject({
      before: { active: false, expires_at: null },
      after: { active: true, expires_at: '2026-07-01 12:00:00' },
      period: 'month',
      days: 30,
    });
  });

  it('refuses a period or a number of days the CLI refuses', async () => {
    const user = await makeUser(t);
    for (const [period, days] of [
      ['week', '30'],
      ['month', '0'],
      ['month', '3661'],
      ['year', '1.5'],
    ])
      expect(await refusal(grantUserPremium(db(), ctx(), actor, { userId: user.id, period, days }))).toBe(
        'invalid_period',
      );
    expect(await eventsAbout(user.id)).toEqual([]);
  });
});

describe('wallet', () => {
  it('credits and debits with the reason in the ledger and the event; the books balance', async () => {
    const user = await makeUser(t);
    const credited = await moveUserCoins(db(), ctx(), actor, {
      userId: user.id,
      direction: 'credit',
      amount: '12.50',
      reason: 'Refund of order 77',
    });
    expect(credited.balance).toBe(12.5);
    const debited = await moveUserCoins(db(), ctx(), actor, {
      userId: user.id,
      direction: 'debit',
      amount: '2.25',
      reason: 'Duplicate refund',
    });
    expect(debited.balance).toBe(10.25);
    const entries = await db()
      .selectFrom('wallet_transactions')
      .selectAll()
      .where('user_id', '=', user.id)
      .orderBy('id')
      .execute();
    expect(entries.map((entry) => [entry.type, entry.amount, entry.description])).toEqual([
      ['credit', 1250, 'Refund of order 77'],
      ['debit', 225, 'Duplicate refund'],
    ]);
    const events = await eventsAbout(user.id);
    expect(events.map((event) => event.action)).toEqual(['wallet_credited', 'wallet_debited']);
    expect(events[1]?.details).toMatchObject({
      before: { balance: 12.5 },
      after: { balance: 10.25 },
      amount: 2.25,
      reason: 'Duplicate refund',
      transaction: debited.transaction,
    });
    expect((await verifyLedger(db())).ok).toBe(true);
  });

  it('refuses a debit beyond the balance and changes nothing', async () => {
    const user = await makeUser(t);
    await moveUserCoins(db(), ctx(), actor, {
      userId: user.id,
      direction: 'credit',
      amount: '5',
      reason: 'Gift',
    });
    expect(
      await refusal(
        moveUserCoins(db(), ctx(), actor, {
          userId: user.id,
          direction: 'debit',
          amount: '5.01',
          reason: 'Too much',
        }),
      ),
    ).toBe('insufficient_funds');
    expect(await balanceOf(user.id)).toBe(5);
    expect((await eventsAbout(user.id)).map((event) => event.action)).toEqual(['wallet_credited']);
    // A wallet never made: nothing to take.
    const empty = await makeUser(t);
    expect(
      await refusal(
        moveUserCoins(db(), ctx(), actor, { userId: empty.id, direction: 'debit', amount: '1', reason: 'x' }),
      ),
    ).toBe('insufficient_funds');
  });

  it('refuses a bad amount or an empty reason', async () => {
    const user = await makeUser(t);
    for (const amount of ['0', '-1', '1e3', '1.234', '', 'ten'])
      expect(
        await refusal(
          moveUserCoins(db(), ctx(), actor, { userId: user.id, direction: 'credit', amount, reason: 'r' }),
        ),
      ).toBe('invalid_amount');
    expect(
      await refusal(
        moveUserCoins(db(), ctx(), actor, {
          userId: user.id,
          direction: 'credit',
          amount: '1',
          reason: '  ',
        }),
      ),
    ).toBe('invalid_reason');
    expect(
      await refusal(
        moveUserCoins(db(), ctx(), actor, {
          userId: user.id,
          direction: 'credit',
          amount: '1',
          reason: 'r'.repeat(256),
        }),
      ),
    ).toBe('invalid_reason');
    expect(await balanceOf(user.id)).toBe(0);
  });
});

describe('the user page', () => {
  it('shows factors, sessions, premium, ledger and events, and no secret', async () => {
    const { user } = await makeTotpUser(t);
    const now = t.clock.now();
    const idHash = hashSecret('session-id-of-the-test');
    await insertSession(db(), {
      idHash,
      userId: user.id,
      authTime: now,
      amr: ['pwd', 'otp'],
      createdAt: now,
      expiresAt: new Date(now.getTime() + 3600_000),
      userAgent: 'Firefox/140',
      ip: '198.51.100.7',
    });
    await moveUserCoins(db(), ctx(), actor, {
      userId: user.id,
      direction: 'credit',
      amount: '3',
      reason: 'Welcome',
    });
    const detail = await userDetail(db(), ctx(), user.id);
    expect(detail?.secondFactors).toMatchObject({ totp: 'on', recoveryCodesUnused: 10, passkeys: [] });
    expect(detail?.sessions).toEqual([
      expect.objectContaining({ ip: '198.51.100.7', userAgent: 'Firefox/140', live: true }),
    ]);
    expect(detail?.wallet.balance).toBe(3);
    expect(detail?.wallet.entries[0]).toMatchObject({ type: 'credit', amount: 3, description: 'Welcome' });
    const credited = detail?.audit.find((line) => line.action === 'wallet_credited');
    expect(credited).toMatchObject({
      actorKind: 'operator',
      operator: { username: 'op_money', role: 'owner' },
    });
    expect(detail?.audit.some((line) => line.action === 'totp_enabled' && line.actorKind === 'self')).toBe(
      true,
    );
    const secrets = await db()
      .selectFrom('totp_credentials')
      .select('secret_sealed')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    const text = JSON.stringify(detail);
    expect(text).not.toContain(secrets.secret_sealed);
    expect(text).not.toContain(idHash);
    expect(text).not.toMatch(/argon2|password_hash|secretSealed/);
  });

  it('is undefined for an unknown id', async () => {
    expect(await userDetail(db(), ctx(), 987654)).toBeUndefined();
  });
});
