import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import {
  type Leased,
  markLeasedDone,
  markLeasedFailed,
  renewLease,
} from '../outbox/leased-outbox.repository.js';

/** The channel an enqueued message is announced on, when its transaction commits. */
export const MAIL_CHANNEL = 'idp_mail_outbox';

export interface NewMail {
  kind: string;
  /** The account the message is about, if any: the per-account limit counts by it. */
  userId?: number;
  recipient: string;
  locale: string;
  subject: string;
  text: string;
  html: string;
}

/** A message as the worker sends it. */
export interface QueuedMail extends NewMail {
  id: number;
  /** Sends started, this one included. */
  attempts: number;
  createdAt: Date;
  /** The claim this worker holds; its writes count only while it still holds it. */
  claimId: string;
}

/** A message as the operator sees it: never its body (which may carry a token). */
export interface MailRecord {
  id: number;
  kind: string;
  recipient: string;
  createdAt: Date;
  attempts: number;
  nextAttemptAt: Date;
  sentAt: Date | null;
  failedAt: Date | null;
  lastError: string | null;
}

/** Namespace of the advisory locks that serialise an account's messages of one kind. */
const MAIL_LIMIT_LOCK = 0x6d61696c; // 'mail'

/**
 * How many messages of `kind` about the account were queued since `since`, counted under a
 * transaction-scoped lock on (account, kind): two concurrent transactions cannot both see room for
 * one more, so the limit holds under a race. Run it on the transaction that then queues.
 */
export async function countRecentMailLocked(
  trx: Kysely<Database>,
  where: { userId: number; kind: string; since: Date },
): Promise<number> {
  await sql`select pg_advisory_xact_lock(${MAIL_LIMIT_LOCK}::int4, hashtext(${`${where.userId}:${where.kind}`}))`.execute(
    trx,
  );
  const row = await trx
    .selectFrom('mail_outbox')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('user_id', '=', where.userId)
    .where('kind', '=', where.kind)
    .where('created_at', '>', where.since)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Namespace of the advisory locks that serialise the messages of one kind to one address. */
const RECIPIENT_LIMIT_LOCK = 0x6d616472; // 'madr'

/**
 * How many messages of `kind` were queued to the address of `recipientHash` (the SHA-256 of its
 * normalised form) since `since`, under a transaction-scoped lock on (address, kind), as
 * countRecentMailLocked: run it on the transaction that then queues and records the message.
 */
export async function countRecentRecipientMailLocked(
  trx: Kysely<Database>,
  where: { recipientHash: string; kind: string; since: Date },
): Promise<number> {
  await sql`select pg_advisory_xact_lock(${RECIPIENT_LIMIT_LOCK}::int4, hashtext(${`${where.recipientHash}:${where.kind}`}::text))`.execute(
    trx,
  );
  const row = await trx
    .selectFrom('mail_recipient_sends')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('recipient_hash', '=', where.recipientHash)
    .where('kind', '=', where.kind)
    .where('created_at', '>', where.since)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Records a message queued to an address, counted until `expiresAt`; the address's rows of that
 * kind already past it go at the same time, so an address's rows stay few between purges.
 */
export async function recordRecipientSend(
  trx: Kysely<Database>,
  send: { recipientHash: string; kind: string; at: Date; expiresAt: Date },
): Promise<void> {
  await trx
    .deleteFrom('mail_recipient_sends')
    .where('recipient_hash', '=', send.recipientHash)
    .where('kind', '=', send.kind)
    .where('expires_at', '<=', send.at)
    .execute();
  await trx
    .insertInto('mail_recipient_sends')
    .values({
      recipient_hash: send.recipientHash,
      kind: send.kind,
      created_at: send.at,
      expires_at: send.expiresAt,
    })
    .execute();
}

/** Deletes every message about an account, sent or waiting (the account's deletion). */
export async function deleteMailOfUser(trx: Kysely<Database>, userId: number): Promise<number> {
  const result = await trx.deleteFrom('mail_outbox').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Queues a message due at once, and announces it: PostgreSQL delivers a NOTIFY only when its
 * transaction commits, so a worker woken by it finds the row (and a rolled-back one never wakes it).
 */
export async function insertMail(db: Kysely<Database>, mail: NewMail, now: Date): Promise<number> {
  const row = await db
    .insertInto('mail_outbox')
    .values({
      kind: mail.kind,
      recipient: mail.recipient,
      locale: mail.locale,
      subject: mail.subject,
      text_body: mail.text,
      html_body: mail.html,
      created_at: now,
      next_attempt_at: now,
      user_id: mail.userId ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  // A payload of its own: the listeners of src/db/database.ts pass on only non-empty ones.
  await sql`select pg_notify(${MAIL_CHANNEL}, 'queued')`.execute(db);
  return row.id;
}

/**
 * Claims up to `limit` due messages for `claimId` until `leaseUntil`, oldest due first. `FOR UPDATE
 * SKIP LOCKED`: two instances claiming at once take different rows, and the lease keeps the others
 * away while it is sent; a claim whose lease ended (its instance died) is due again.
 */
export async function claimDueMail(
  db: Kysely<Database>,
  input: { now: Date; leaseUntil: Date; claimId: string; limit: number },
): Promise<QueuedMail[]> {
  const result = await sql<{
    id: number;
    kind: string;
    recipient: string;
    locale: string;
    subject: string;
    text_body: string;
    html_body: string;
    attempts: number;
    created_at: Date;
  }>`
    update mail_outbox
    set claim_id = ${input.claimId}, claimed_until = ${input.leaseUntil}, attempts = attempts + 1
    where id in (
      select id from mail_outbox
      where sent_at is null and failed_at is null and next_attempt_at <= ${input.now}
        and (claimed_until is null or claimed_until <= ${input.now})
      order by next_attempt_at, id
      limit ${input.limit}
      for update skip locked
    )
    returning id, kind, recipient, locale, subject, text_body, html_body, attempts, created_at`.execute(db);
  return result.rows
    .map((row) => ({
      id: Number(row.id),
      kind: row.kind,
      recipient: row.recipient,
      locale: row.locale,
      subject: row.subject,
      text: row.text_body,
      html: row.html_body,
      attempts: Number(row.attempts),
      createdAt: new Date(row.created_at),
      claimId: input.claimId,
    }))
    .sort((a, b) => a.id - b.id);
}

/** Extends this claim on a message just before it is sent; false when the claim was lost. */
export const renewClaim = (db: Kysely<Database>, mail: Leased, input: { leaseUntil: Date }) =>
  renewLease(db, 'mail_outbox', mail, input);

/** Records a delivery; false when the claim was lost meanwhile (its lease ended and another took it). */
export const markMailSent = (db: Kysely<Database>, mail: Leased, input: { now: Date; purgeAfter: Date }) =>
  markLeasedDone(db, 'mail_outbox', mail, input);

/** Records a failed send: due again at `retryAt`, or given up on when `retryAt` is null. */
export const markMailFailed = (
  db: Kysely<Database>,
  mail: Leased,
  input: { now: Date; error: string; retryAt: Date | null; purgeAfter: Date },
) => markLeasedFailed(db, 'mail_outbox', mail, input);

/** The latest messages, newest first, optionally only the given-up ones: for `idp mail outbox`. */
export async function latestMail(
  db: Kysely<Database>,
  input: { limit: number; failedOnly: boolean },
): Promise<MailRecord[]> {
  let query = db
    .selectFrom('mail_outbox')
    .select([
      'id',
      'kind',
      'recipient',
      'created_at',
      'attempts',
      'next_attempt_at',
      'sent_at',
      'failed_at',
      'last_error',
    ])
    .orderBy('id', 'desc')
    .limit(input.limit);
  if (input.failedOnly) query = query.where('failed_at', 'is not', null);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    recipient: row.recipient,
    createdAt: row.created_at,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    sentAt: row.sent_at,
    failedAt: row.failed_at,
    lastError: row.last_error,
  }));
}

/** How many messages wait, were sent and were given up on (those still kept). */
export async function countMail(
  db: Kysely<Database>,
): Promise<{ pending: number; sent: number; failed: number }> {
  const row = await db
    .selectFrom('mail_outbox')
    .select((eb) => [
      eb.fn
        .countAll<number>()
        .filterWhere('sent_at', 'is', null)
        .filterWhere('failed_at', 'is', null)
        .as('pending'),
      eb.fn.countAll<number>().filterWhere('sent_at', 'is not', null).as('sent'),
      eb.fn.countAll<number>().filterWhere('failed_at', 'is not', null).as('failed'),
    ])
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), sent: Number(row.sent), failed: Number(row.failed) };
}

/**
 * Puts a message given up on back in the queue, due at once with a fresh count of attempts (the
 * operator's retry), and announces it; undefined when there is no such message, or it is not
 * failed (waiting or sent: nothing to retry). Its kind and recipient, for the audit log.
 */
export async function retryFailedMail(
  db: Kysely<Database>,
  id: number,
  now: Date,
): Promise<{ id: number; kind: string; recipient: string } | undefined> {
  const row = await db
    .updateTable('mail_outbox')
    .set({ failed_at: null, purge_after: null, attempts: 0, next_attempt_at: now })
    .where('id', '=', id)
    .where('failed_at', 'is not', null)
    .returning(['id', 'kind', 'recipient'])
    .executeTakeFirst();
  if (row) await sql`select pg_notify(${MAIL_CHANNEL}, 'queued')`.execute(db);
  return row && { id: Number(row.id), kind: row.kind, recipient: row.recipient };
}
