import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** One trip to a provider as it was started: what it is for and where the person was going. */
export interface RoundTrip {
  providerId: number;
  purpose: 'sign_in' | 'link' | 'reauth';
  userId: number | null;
  requestId: string | null;
  returnTo: string | null;
}

export async function insertRoundTrip(
  db: Kysely<Database>,
  trip: RoundTrip & { stateHash: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('upstream_round_trips')
    .values({
      state_hash: trip.stateHash,
      provider_id: trip.providerId,
      purpose: trip.purpose,
      user_id: trip.userId,
      request_id: trip.requestId,
      return_to: trip.returnTo,
      created_at: trip.at,
      expires_at: trip.expiresAt,
    })
    .execute();
}

/** The trip of this `state`, taken once (a replayed callback finds nothing), if it has not expired. */
export async function takeRoundTrip(
  db: Kysely<Database>,
  stateHash: string,
  now: Date,
): Promise<RoundTrip | undefined> {
  const row = await db
    .deleteFrom('upstream_round_trips')
    .where('state_hash', '=', stateHash)
    .returningAll()
    .executeTakeFirst();
  if (!row || row.expires_at <= now) return undefined;
  return {
    providerId: row.provider_id,
    purpose: row.purpose,
    userId: row.user_id,
    requestId: row.request_id,
    returnTo: row.return_to,
  };
}

/** An identity proved at a provider that no account holds yet. */
export interface PendingIdentity {
  providerId: number;
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  label: string | null;
  suggestedUsername: string | null;
  amr: string[];
  requestId: string | null;
  returnTo: string | null;
}

export async function insertPendingIdentity(
  db: Kysely<Database>,
  pending: PendingIdentity & { tokenHash: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('upstream_pending')
    .values({
      token_hash: pending.tokenHash,
      provider_id: pending.providerId,
      issuer: pending.issuer,
      subject: pending.subject,
      email: pending.email,
      email_verified: pending.emailVerified,
      label: pending.label,
      suggested_username: pending.suggestedUsername,
      amr: JSON.stringify(pending.amr),
      request_id: pending.requestId,
      return_to: pending.returnTo,
      created_at: pending.at,
      expires_at: pending.expiresAt,
    })
    .execute();
}

function toPending(row: {
  provider_id: number;
  issuer: string;
  subject: string;
  email: string | null;
  email_verified: boolean;
  label: string | null;
  suggested_username: string | null;
  amr: string[];
  request_id: string | null;
  return_to: string | null;
}): PendingIdentity {
  return {
    providerId: row.provider_id,
    issuer: row.issuer,
    subject: row.subject,
    email: row.email,
    emailVerified: row.email_verified,
    label: row.label,
    suggestedUsername: row.suggested_username,
    amr: Array.isArray(row.amr) ? row.amr.map(String) : [],
    requestId: row.request_id,
    returnTo: row.return_to,
  };
}

/** The pending identity, while it lasts. */
export async function findPendingIdentity(
  db: Kysely<Database>,
  tokenHash: string,
  now: Date,
): Promise<PendingIdentity | undefined> {
  const row = await db
    .selectFrom('upstream_pending')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row && toPending(row);
}

/** Takes the pending identity once: the account it becomes or joins is made by one request only. */
export async function takePendingIdentity(
  db: Kysely<Database>,
  tokenHash: string,
  now: Date,
): Promise<PendingIdentity | undefined> {
  const row = await db
    .deleteFrom('upstream_pending')
    .where('token_hash', '=', tokenHash)
    .returningAll()
    .executeTakeFirst();
  return row && row.expires_at > now ? toPending(row) : undefined;
}
