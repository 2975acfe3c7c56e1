import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SigningAlgorithm } from '../../lib/signing-algorithms.js';
import {
  type Leased,
  markLeasedDone,
  markLeasedFailed,
  renewLease,
} from '../outbox/leased-outbox.repository.js';

/** The channel a queued logout is announced on, when its transaction commits. */
export const LOGOUT_CHANNEL = 'idp_backchannel_logouts';

/** A logout claimed for delivery, with where it goes now (the client's current registration). */
export interface QueuedLogout {
  id: number;
  /** The audience: the client's `client_id`. */
  clientId: string;
  /** The client's id_token algorithm, which signs its logout tokens too. */
  alg: SigningAlgorithm;
  /** Null when the client removed its URI since, or was disabled: nothing is sent. */
  uri: string | null;
  userId: number;
  sid: string;
  reason: string;
  /** Deliveries started, this one included. */
  attempts: number;
  createdAt: Date;
  /** The claim this worker holds; its writes count only while it still holds it. */
  claimId: string;
}

/**
 * Queues one logout per (ended session, client with a grant made in it and a back-channel logout
 * URI), in the caller's transaction, and announces them (a NOTIFY is delivered only on commit).
 * Grants revoked meanwhile count too: the site may still hold the session the id_token started.
 * Answers how many were queued.
 */
export async function queueLogouts(
  db: Kysely<Database>,
  input: { sids: readonly string[]; reason: string; now: Date },
): Promise<number> {
  if (input.sids.length === 0) return 0;
  const result = await sql`
    insert into backchannel_logouts (client_pk, user_id, sid, reason, created_at, next_attempt_at)
    select distinct g.client_pk, g.user_id, g.sid, ${input.reason}, ${input.now}::timestamptz, ${input.now}::timestamptz
    from grants g join clients c on c.id = g.client_pk
    where g.sid = any(${[...input.sids]}::text[])
      and c.backchannel_logout_uri is not null and c.disabled_at is null`.execute(db);
  const queued = Number(result.numAffectedRows ?? 0n);
  // A payload of its own: the listeners of src/db/database.ts pass on only non-empty ones.
  if (queued > 0) await sql`select pg_notify(${LOGOUT_CHANNEL}, 'queued')`.execute(db);
  return queued;
}

/**
 * Claims up to `limit` due logouts for `claimId` until `leaseUntil`, oldest due first. `FOR UPDATE
 * SKIP LOCKED`: two instances claiming at once take different rows, and the lease keeps the others
 * away during the delivery; a claim whose lease ended (its instance died) is due again.
 */
export async function claimDueLogouts(
  db: Kysely<Database>,
  input: { now: Date; leaseUntil: Date; claimId: string; limit: number },
): Promise<QueuedLogout[]> {
  const result = await sql<{
    id: number;
    client_id: string;
    id_token_signed_response_alg: SigningAlgorithm;
    uri: string | null;
    user_id: number;
    sid: string;
    reason: string;
    attempts: number;
    created_at: Date;
  }>`
    with claimed as (
      update backchannel_logouts
      set claim_id = ${input.claimId}, claimed_until = ${input.leaseUntil}, attempts = attempts + 1
      where id in (
        select id from backchannel_logouts
        where delivered_at is null and failed_at is null and next_attempt_at <= ${input.now}
          and (claimed_until is null or claimed_until <= ${input.now})
        order by next_attempt_at, id
        limit ${input.limit}
        for update skip locked
      )
      returning id, client_pk, user_id, sid, reason, attempts, created_at
    )
    select claimed.id, c.client_id, c.id_token_signed_response_alg,
      case when c.disabled_at is null then c.backchannel_logout_uri end as uri,
      claimed.user_id, claimed.sid, claimed.reason, claimed.attempts, claimed.created_at
    from claimed join clients c on c.id = claimed.client_pk
    order by claimed.id`.execute(db);
  return result.rows.map((row) => ({
    id: Number(row.id),
    clientId: row.client_id,
    alg: row.id_token_signed_response_alg,
    uri: row.uri,
    userId: Number(row.user_id),
    sid: row.sid,
    reason: row.reason,
    attempts: Number(row.attempts),
    createdAt: new Date(row.created_at),
    claimId: input.claimId,
  }));
}

/** Extends this claim just before a delivery; false when it was lost (so it must not be delivered). */
export const renewLogoutClaim = (db: Kysely<Database>, logout: Leased, input: { leaseUntil: Date }) =>
  renewLease(db, 'backchannel_logouts', logout, input);

/** Records a delivery; false when the claim was lost meanwhile. */
export const markLogoutDelivered = (
  db: Kysely<Database>,
  logout: Leased,
  input: { now: Date; purgeAfter: Date },
) => markLeasedDone(db, 'backchannel_logouts', logout, input);

/** Records a failed delivery: due again at `retryAt`, or given up on when `retryAt` is null. */
export const markLogoutFailed = (
  db: Kysely<Database>,
  logout: Leased,
  input: { now: Date; error: string; retryAt: Date | null; purgeAfter: Date },
) => markLeasedFailed(db, 'backchannel_logouts', logout, input);

/** A logout as the operator sees it: its client, account and outcome; never the session id or a token. */
export interface LogoutRecord {
  id: number;
  clientId: string;
  clientName: string;
  userId: number;
  reason: string;
  createdAt: Date;
  attempts: number;
  deliveredAt: Date | null;
  failedAt: Date | null;
  lastError: string | null;
}

/** How many logouts wait, were delivered and were given up on (those still kept). */
export async function countLogouts(
  db: Kysely<Database>,
): Promise<{ pending: number; delivered: number; failed: number }> {
  const row = await db
    .selectFrom('backchannel_logouts')
    .select((eb) => [
      eb.fn
        .countAll<number>()
        .filterWhere('delivered_at', 'is', null)
        .filterWhere('failed_at', 'is', null)
        .as('pending'),
      eb.fn.countAll<number>().filterWhere('delivered_at', 'is not', null).as('delivered'),
      eb.fn.countAll<number>().filterWhere('failed_at', 'is not', null).as('failed'),
    ])
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), delivered: Number(row.delivered), failed: Number(row.failed) };
}

/** The latest logouts, newest first, optionally only the given-up ones, with their client's client_id and name. */
export async function latestLogouts(
  db: Kysely<Database>,
  input: { limit: number; failedOnly: boolean },
): Promise<LogoutRecord[]> {
  let query = db
    .selectFrom('backchannel_logouts as b')
    .innerJoin('clients as c', 'c.id', 'b.client_pk')
    .select([
      'b.id',
      'c.client_id',
      'c.name',
      'b.user_id',
      'b.reason',
      'b.created_at',
      'b.attempts',
      'b.delivered_at',
      'b.failed_at',
      'b.last_error',
    ])
    .orderBy('b.id', 'desc')
    .limit(input.limit);
  if (input.failedOnly) query = query.where('b.failed_at', 'is not', null);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: Number(row.id),
    clientId: row.client_id,
    clientName: row.name,
    userId: Number(row.user_id),
    reason: row.reason,
    createdAt: row.created_at,
    attempts: row.attempts,
    deliveredAt: row.delivered_at,
    failedAt: row.failed_at,
    lastError: row.last_error,
  }));
}

/**
 * Puts a logout given up on back in the queue, due at once with a fresh count of attempts (the
 * operator's retry), and announces it; undefined when there is none, or it is not failed.
 */
export async function retryFailedLogout(
  db: Kysely<Database>,
  id: number,
  now: Date,
): Promise<{ id: number; clientId: string; userId: number } | undefined> {
  const row = await db
    .updateTable('backchannel_logouts')
    .set({ failed_at: null, purge_after: null, attempts: 0, next_attempt_at: now })
    .where('id', '=', id)
    .where('failed_at', 'is not', null)
    .returning(['id', 'client_pk', 'user_id'])
    .executeTakeFirst();
  if (!row) return undefined;
  await sql`select pg_notify(${LOGOUT_CHANNEL}, 'queued')`.execute(db);
  const client = await db
    .selectFrom('clients')
    .select('client_id')
    .where('id', '=', row.client_pk)
    .executeTakeFirstOrThrow();
  return { id: Number(row.id), clientId: client.client_id, userId: Number(row.user_id) };
}
