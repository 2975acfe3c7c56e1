import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/**
 * The writes both outboxes (e-mail, back-channel logouts) make to a row a worker has claimed. A
 * claim holds a row until `claimed_until`; each write counts only while the worker still holds it
 * (`claim_id`), so an instance whose lease ended, and whose row another instance claimed, can
 * neither send it again nor record over the other's outcome.
 */
export type LeasedOutbox = 'mail_outbox' | 'backchannel_logouts';

/** A claimed row: its id and the claim the worker holds on it. */
export interface Leased {
  id: number;
  claimId: string;
}

/** Extends the claim to `leaseUntil` just before a delivery; false when it was lost meanwhile. */
export async function renewLease(
  db: Kysely<Database>,
  table: LeasedOutbox,
  row: Leased,
  input: { leaseUntil: Date },
): Promise<boolean> {
  const result = await db
    .updateTable(table)
    .set({ claimed_until: input.leaseUntil })
    .where('id', '=', row.id)
    .where('claim_id', '=', row.claimId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records a delivery (`sent_at` or `delivered_at`); false when the claim was lost meanwhile. */
export async function markLeasedDone(
  db: Kysely<Database>,
  table: LeasedOutbox,
  row: Leased,
  input: { now: Date; purgeAfter: Date },
): Promise<boolean> {
  const released = { claim_id: null, claimed_until: null, last_error: null, purge_after: input.purgeAfter };
  const done = table === 'mail_outbox' ? { sent_at: input.now } : { delivered_at: input.now };
  const result = await db
    .updateTable(table)
    .set({ ...released, ...done })
    .where('id', '=', row.id)
    .where('claim_id', '=', row.claimId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Records a failed attempt: due again at `retryAt`, or given up on (`failed_at`) when `retryAt` is
 * null. The claim ends either way.
 */
export async function markLeasedFailed(
  db: Kysely<Database>,
  table: LeasedOutbox,
  row: Leased,
  input: { now: Date; error: string; retryAt: Date | null; purgeAfter: Date },
): Promise<void> {
  await db
    .updateTable(table)
    .set({
      claim_id: null,
      claimed_until: null,
      last_error: input.error,
      ...(input.retryAt
        ? { next_attempt_at: input.retryAt }
        : { failed_at: input.now, purge_after: input.purgeAfter }),
    })
    .where('id', '=', row.id)
    .where('claim_id', '=', row.claimId)
    .execute();
}
