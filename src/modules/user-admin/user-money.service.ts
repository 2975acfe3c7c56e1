import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { ApiError, InsufficientFunds } from '../../lib/errors.js';
import { recordAudit } from '../audit/audit.repository.js';
import { type OperatorActor, operatorAuditEvent } from '../operators/operator-audit.js';
import { getPremiumStatus, grantPremium } from '../premium/premium.service.js';
import { BILLING_PERIODS, type BillingPeriod, MAX_GRANT_DAYS } from '../premium/premium-grant.js';
import { findBalance } from '../wallet/wallet.repository.js';
import { toCoins } from '../wallet/wallet.schemas.js';
import { credit, debit } from '../wallet/wallet.service.js';
import { UserActionRefused } from './user-action-refused.js';
import { onLockedUser, subjectOf } from './user-actions.service.js';

/** A premium grant as the form sends it: `month|year` and 1 to MAX_GRANT_DAYS days, as `idp premium grant` takes it. */
export function parseGrant(input: { period: unknown; days: unknown }): {
  period: BillingPeriod;
  days: number;
} {
  const period = String(input.period ?? '');
  if (!(BILLING_PERIODS as readonly string[]).includes(period))
    throw new UserActionRefused('invalid_period', 'period must be month or year');
  const text = String(input.days ?? '');
  const days = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(days >= 1 && days <= MAX_GRANT_DAYS))
    throw new UserActionRefused('invalid_period', `days must be a whole number from 1 to ${MAX_GRANT_DAYS}`);
  return { period: period as BillingPeriod, days };
}

/**
 * Adds premium days through the service of `idp premium grant` (after the current period, or from
 * now), with the operator's event in the same transaction.
 */
export async function grantUserPremium(
  db: Kysely<Database>,
  ctx: Context,
  actor: OperatorActor,
  input: { userId: number; period: unknown; days: unknown },
): Promise<{ expiresAt: string | null }> {
  const grant = parseGrant(input);
  return onLockedUser(db, input.userId, async (trx, user) => {
    const before = await getPremiumStatus(trx, ctx, user.id);
    const after = await grantPremium(trx, ctx, { username: user.username, ...grant });
    await recordAudit(
      trx,
      operatorAuditEvent(actor, ctx.clock.now(), {
        action: 'premium_granted',
        subject: subjectOf(user.id),
        before: { active: before.active, expires_at: before.expires_at },
        after: { active: after.active, expires_at: after.expires_at },
        details: grant,
      }),
    );
    return { expiresAt: after.expires_at };
  });
}

/** AMOUNT as the form sends it: coins with at most 2 decimals, digits only (as `idp wallet credit` reads it). */
export function parseAmount(value: unknown): number {
  const text = String(value ?? '').trim();
  if (!/^\d{1,10}(\.\d{1,2})?$/.test(text) || Number(text) <= 0)
    throw new UserActionRefused('invalid_amount', 'amount must be a number of coins with at most 2 decimals');
  return Number(text);
}

/** The reason of a credit or debit: 1–255 characters once trimmed, kept as the ledger entry's description. */
export function parseReason(value: unknown): string {
  const text = String(value ?? '').trim();
  if (text.length === 0) throw new UserActionRefused('invalid_reason', 'a reason is required');
  return text;
}

/**
 * Credits or debits the wallet through the wallet's services (one statement moves the money and
 * writes the ledger entry, whose description is the reason), with the operator's event in the same
 * transaction: the entry and the event commit together. A debit never takes the balance below zero.
 */
export async function moveUserCoins(
  db: Kysely<Database>,
  ctx: Context,
  actor: OperatorActor,
  input: { userId: number; direction: 'credit' | 'debit'; amount: unknown; reason: unknown },
): Promise<{ balance: number; transaction: string }> {
  const amount = parseAmount(input.amount);
  const reason = parseReason(input.reason);
  return onLockedUser(db, input.userId, async (trx, user) => {
    const before = toCoins(await findBalance(trx, user.id));
    const move = input.direction === 'credit' ? credit : debit;
    let moved: Awaited<ReturnType<typeof move>>;
    try {
      moved = await move(trx, ctx, { username: user.username, amount, description: reason });
    } catch (error) {
      if (error instanceof InsufficientFunds)
        throw new UserActionRefused('insufficient_funds', `the balance is ${before}, less than ${amount}`);
      // The wallet's own checks: a description it refuses, or a balance past the largest one held.
      if (error instanceof ApiError && error.status === 400)
        throw new UserActionRefused(
          /description/.test(error.message) ? 'invalid_reason' : 'balance_limit',
          error.message,
        );
      throw error;
    }
    await recordAudit(
      trx,
      operatorAuditEvent(actor, ctx.clock.now(), {
        action: input.direction === 'credit' ? 'wallet_credited' : 'wallet_debited',
        subject: subjectOf(user.id),
        before: { balance: before },
        after: { balance: moved.balance },
        details: { transaction: moved.transaction.id, amount, reason },
      }),
    );
    return { balance: moved.balance, transaction: moved.transaction.id };
  });
}
