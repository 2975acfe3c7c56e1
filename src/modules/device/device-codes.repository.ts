import { type Kysely, sql } from 'kysely';
import { prepared } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';

/** A pending request as the confirmation page shows it. */
export interface PendingDeviceCode {
  id: number;
  clientPk: number;
  scopes: string[];
  deviceLabel: string | null;
  expiresAt: Date;
}

export async function insertDeviceCode(
  db: Kysely<Database>,
  code: {
    deviceCodeHash: string;
    userCodeHash: string;
    clientPk: number;
    scopes: string[];
    deviceLabel: string | null;
    intervalSeconds: number;
    at: Date;
    expiresAt: Date;
  },
): Promise<number> {
  const row = await db
    .insertInto('device_codes')
    .values({
      device_code_hash: code.deviceCodeHash,
      user_code_hash: code.userCodeHash,
      client_pk: code.clientPk,
      scopes: code.scopes,
      device_label: code.deviceLabel,
      interval_seconds: code.intervalSeconds,
      created_at: code.at,
      expires_at: code.expiresAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** The pending, unexpired request of this user code. */
export async function findPendingDeviceCode(
  db: Kysely<Database>,
  userCodeHash: string,
  now: Date,
): Promise<PendingDeviceCode | undefined> {
  const row = await db
    .selectFrom('device_codes')
    .select(['id', 'client_pk', 'scopes', 'device_label', 'expires_at'])
    .where('user_code_hash', '=', userCodeHash)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return (
    row && {
      id: row.id,
      clientPk: row.client_pk,
      scopes: row.scopes,
      deviceLabel: row.device_label,
      expiresAt: row.expires_at,
    }
  );
}

/** Allows or denies a pending request, once; false when it was decided, expired or is gone. */
export async function decideDeviceCode(
  db: Kysely<Database>,
  input: {
    id: number;
    status: 'allowed' | 'denied';
    userId: number;
    authTime: Date;
    amr: readonly string[];
    sid: string | null;
    at: Date;
  },
): Promise<boolean> {
  const row = await db
    .updateTable('device_codes')
    .set({
      status: input.status,
      user_id: input.userId,
      auth_time: input.authTime,
      amr: [...input.amr],
      sid: input.sid,
      decided_at: input.at,
    })
    .where('id', '=', input.id)
    .where('status', '=', 'pending')
    .where('expires_at', '>', input.at)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** What a poll found: the request's state, and how the device had polled before this one. */
export interface PolledDeviceCode {
  id: number;
  status: 'pending' | 'allowed' | 'denied';
  expiresAt: Date;
  redeemedAt: Date | null;
  intervalSeconds: number;
  /** The interval before this poll, and when the device polled last before it. */
  previousInterval: number;
  previousPollAt: Date | null;
}

/** RFC 8628 §3.5: how much a poll sooner than the interval grows it, here and in DevicePollCache. */
export const SLOW_DOWN_STEP_SECONDS = 5;

/**
 * A device's first poll at an instance, in one statement: records it, and grows the interval by
 * SLOW_DOWN_STEP_SECONDS when the device polled again sooner than the interval allowed while the
 * request was pending (RFC 8628 §3.5 slow_down). The `FROM device_codes before` self-join answers
 * the values as they were before this update.
 */
export async function pollDeviceCode(
  db: Kysely<Database>,
  input: { deviceCodeHash: string; clientPk: number; now: Date },
): Promise<PolledDeviceCode | undefined> {
  const result = await sql<{
    id: number;
    status: 'pending' | 'allowed' | 'denied';
    expires_at: Date;
    redeemed_at: Date | null;
    interval_seconds: number;
    previous_interval: number;
    previous_poll_at: Date | null;
  }>`${prepared}
    update device_codes d
    set last_polled_at = ${input.now},
      interval_seconds = d.interval_seconds + case
        when d.status = 'pending' and d.last_polled_at is not null
          and d.last_polled_at > ${input.now}::timestamptz - make_interval(secs => d.interval_seconds)
        then ${sql.lit(SLOW_DOWN_STEP_SECONDS)} else 0 end
    from device_codes before
    where before.id = d.id and d.device_code_hash = ${input.deviceCodeHash} and d.client_pk = ${input.clientPk}
    returning d.id, d.status, d.expires_at, d.redeemed_at, d.interval_seconds,
      before.interval_seconds as previous_interval, before.last_polled_at as previous_poll_at
  `.execute(db);
  const row = result.rows[0];
  return (
    row && {
      id: Number(row.id),
      status: row.status,
      expiresAt: row.expires_at,
      redeemedAt: row.redeemed_at,
      intervalSeconds: row.interval_seconds,
      previousInterval: row.previous_interval,
      previousPollAt: row.previous_poll_at,
    }
  );
}

/** An allowed request, taken once for its tokens. */
export interface RedeemedDeviceCode {
  userId: number;
  scopes: string[];
  authTime: Date;
  amr: string[];
  sid: string | null;
}

/**
 * Takes an allowed request for its tokens, once (RFC 8628 §3.5: a device code is redeemed once),
 * and only while its user and client are enabled and the consent it was allowed under stands.
 */
export async function redeemDeviceCode(
  db: Kysely<Database>,
  input: { id: number; now: Date },
): Promise<RedeemedDeviceCode | undefined> {
  const result = await sql<{
    user_id: number;
    scopes: string[];
    auth_time: Date;
    amr: string[];
    sid: string | null;
  }>`
    update device_codes c set redeemed_at = ${input.now}
    where c.id = ${input.id} and c.status = 'allowed' and c.redeemed_at is null and c.expires_at > ${input.now}
      and exists (select 1 from users u where u.id = c.user_id and u.disabled_at is null)
      and exists (select 1 from clients k where k.id = c.client_pk and k.disabled_at is null)
      and exists (
        select 1 from consents k
        where k.user_id = c.user_id and k.client_pk = c.client_pk
          and k.created_at <= c.decided_at and c.scopes <@ k.scopes
      )
    returning c.user_id, c.scopes, c.auth_time, c.amr, c.sid
  `.execute(db);
  const row = result.rows[0];
  return (
    row && {
      userId: row.user_id,
      scopes: row.scopes,
      authTime: row.auth_time,
      amr: row.amr ?? [],
      sid: row.sid,
    }
  );
}

/**
 * Ends the device requests not yet redeemed of a user (those they decided) or of a client (RFC 8628
 * under app revocation, a user or client disabled): a device polling with one is then refused.
 */
export async function deleteUnredeemedDeviceCodes(
  db: Kysely<Database>,
  where: { userId?: number; clientPk?: number },
): Promise<number> {
  let query = db.deleteFrom('device_codes').where('redeemed_at', 'is', null);
  if (where.userId !== undefined) query = query.where('user_id', '=', where.userId);
  if (where.clientPk !== undefined) query = query.where('client_pk', '=', where.clientPk);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}
