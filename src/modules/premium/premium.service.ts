import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { lockUserByUsername } from '../accounts/accounts.repository.js';
import { findBalance } from '../wallet/wallet.repository.js';
import { toCoins } from '../wallet/wallet.schemas.js';
import { findLatestPeriod, insertPeriod } from './premium.repository.js';
import { type GrantInput, grantInputSchema, type PremiumStatus } from './premium.schemas.js';

const DAY_MS = 24 * 3600 * 1000;

/** `YYYY-MM-DD HH:MM:SS` in UTC; fractions of a second are dropped. */
export function formatPremiumDate(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * The user's premium status: `expires_at` and
 * `billing_period` are the latest period's (also once it has ended), null when never premium;
 * `days_left` is the time left rounded up to whole days while active, else 0.
 */
export async function getPremiumStatus(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
): Promise<PremiumStatus> {
  const now = ctx.clock.now();
  const latest = await findLatestPeriod(db, userId, now);
  const active = Boolean(latest?.active);
  const left = latest ? latest.endsAt.getTime() - now.getTime() : 0;
  return {
    ok: true,
    active,
    expires_at: latest ? formatPremiumDate(latest.endsAt) : null,
    billing_period: latest?.billingPeriod ?? null,
    days_left: active && left > 0 ? Math.ceil(left / DAY_MS) : 0,
    wallet_balance: toCoins(await findBalance(db, userId)),
  };
}

/**
 * Adds a period of `days` days to user `username`, starting when the current one ends (so an
 * extension adds to the time left) or now when none is running. The user row is locked for the
 * transaction, so concurrent grants chain one after the other instead of overlapping.
 * @throws InvalidRequest for a period other than month|year or days outside 1–3660.
 * @throws NotFound when there is no such user.
 */
export async function grantPremium(
  db: Kysely<Database>,
  ctx: Context,
  input: GrantInput & { username: string },
): Promise<PremiumStatus> {
  const { username } = input;
  const parsed = grantInputSchema.safeParse(input);
  if (!parsed.success) throw new InvalidRequest(parsed.error.issues.map((issue) => issue.message).join('; '));
  const { period, days } = parsed.data;
  // `db`'s transaction when it is one: the console records its audit event in the same one.
  return inTransaction(db, async (trx) => {
    const user = await lockUserByUsername(trx, username);
    if (!user) throw new NotFound(`no user named ${username}`);
    const now = ctx.clock.now();
    const latest = await findLatestPeriod(trx, user.id, now);
    const startsAt = latest && latest.endsAt.getTime() > now.getTime() ? latest.endsAt : now;
    await insertPeriod(trx, {
      userId: user.id,
      billingPeriod: period,
      startsAt,
      endsAt: new Date(startsAt.getTime() + days * DAY_MS),
      createdAt: now,
    });
    return getPremiumStatus(trx, ctx, user.id);
  });
}
