import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { BillingPeriod } from './premium.schemas.js';

export interface LatestPeriod {
  billingPeriod: BillingPeriod;
  endsAt: Date;
  /** Whether any of the user's periods contains `at`. */
  active: boolean;
}

/**
 * The user's period that ends last (served by the (user_id, ends_at) index), and whether any
 * period contains `at`. Undefined when the user was never premium.
 */
export async function findLatestPeriod(
  db: Kysely<Database>,
  userId: number,
  at: Date,
): Promise<LatestPeriod | undefined> {
  const row = await db
    .selectFrom('premium_periods as latest')
    .select((eb) => [
      'latest.billing_period',
      'latest.ends_at',
      eb
        .exists(
          eb
            .selectFrom('premium_periods as current')
            .select('current.id')
            .where('current.user_id', '=', userId)
            .where('current.starts_at', '<=', at)
            .where('current.ends_at', '>', at),
        )
        .as('active'),
    ])
    .where('latest.user_id', '=', userId)
    .orderBy('latest.ends_at', 'desc')
    .orderBy('latest.id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && { billingPeriod: row.billing_period, endsAt: row.ends_at, active: row.active === true };
}

export async function insertPeriod(
  trx: Transaction<Database>,
  period: { userId: number; billingPeriod: BillingPeriod; startsAt: Date; endsAt: Date; createdAt: Date },
): Promise<void> {
  await trx
    .insertInto('premium_periods')
    .values({
      user_id: period.userId,
      billing_period: period.billingPeriod,
      starts_at: period.startsAt,
      ends_at: period.endsAt,
      created_at: period.createdAt,
    })
    .execute();
}

/** A premium period as the data export shows it. */
export interface PeriodRecord {
  billingPeriod: BillingPeriod;
  startsAt: Date;
  endsAt: Date;
  createdAt: Date;
}

/** Every premium period of a user, oldest first (the data export). */
export function listPeriodsOfUser(db: Kysely<Database>, userId: number): Promise<PeriodRecord[]> {
  return db
    .selectFrom('premium_periods')
    .select([
      'billing_period as billingPeriod',
      'starts_at as startsAt',
      'ends_at as endsAt',
      'created_at as createdAt',
    ])
    .where('user_id', '=', userId)
    .orderBy('starts_at')
    .orderBy('id')
    .execute();
}

/** Deletes every premium period of a user (account deletion); answers how many there were. */
export async function deletePeriodsOfUser(db: Kysely<Database>, userId: number): Promise<number> {
  const deleted = await db.deleteFrom('premium_periods').where('user_id', '=', userId).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
