import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

/** What is purged, and from when on a row is dead. Ledger entries and users are never purged. */
export const EXPIRING = [
  // Used or not, a code past its expiry can no longer be redeemed nor reused.
  { table: 'authorization_codes', column: 'expires_at' },
  { table: 'authorization_requests', column: 'expires_at' },
  // Revoked or not, an expired token is refused anyway; a rotated refresh token is kept until it
  // expires, for the reuse detection.
  { table: 'access_tokens', column: 'expires_at' },
  { table: 'refresh_tokens', column: 'expires_at' },
  { table: 'mobile_challenges', column: 'expires_at' },
  { table: 'wallet_idempotency_keys', column: 'expires_at' },
  // Set only once a message is sent or given up on: one still waiting is never purged.
  { table: 'mail_outbox', column: 'purge_after' },
  // A message counts against its address's hourly limit until then (mail.service enqueueMail).
  { table: 'mail_recipient_sends', column: 'expires_at' },
  // Likewise a logout token delivered or given up on; browser sessions are not
  // here: their purge queues logout tokens (purge.service.ts).
  { table: 'backchannel_logouts', column: 'purge_after' },
  // Used or not, an expired verification link verifies nothing.
  { table: 'email_verifications', column: 'expires_at' },
  // An expired reset link resets nothing; older links of a user expire before its newest one.
  { table: 'password_resets', column: 'expires_at' },
  // The password step of a sign-in: dead once its 5 minutes are over.
  { table: 'pending_sign_ins', column: 'expires_at' },
  { table: 'mobile_pending_sign_ins', column: 'expires_at' },
  // A WebAuthn ceremony not finished within its 5 minutes can no longer be.
  { table: 'webauthn_challenges', column: 'expires_at' },
  // A pushed request not taken within its 60 seconds can no longer be (RFC 9126 §2.2).
  { table: 'pushed_authorization_requests', column: 'expires_at' },
  // A DPoP proof past its acceptance window is refused by its iat anyway (RFC 9449 §11.1).
  { table: 'dpop_proofs', column: 'expires_at' },
  // An expired initial access token registers nothing (RFC 7591 §3); used-up ones expire too.
  { table: 'registration_tokens', column: 'expires_at' },
  // A trip to a provider not answered within its 10 minutes, and an identity it brought back that
  // no account took in that time, are refused anyway (upstream-sign-in.service.ts).
  { table: 'upstream_round_trips', column: 'expires_at' },
  { table: 'upstream_pending', column: 'expires_at' },
  // RFC 8628: a device's request past its 10 minutes is refused anyway (expired_token), redeemed or not.
  { table: 'device_codes', column: 'expires_at' },
] as const satisfies ReadonlyArray<{ table: keyof Database; column: string }>;

/** A sign-in count whose window started before the cut-off no longer matters. */
export const SIGN_IN_ATTEMPTS = { table: 'sign_in_attempts', column: 'window_started_at' } as const;

/** The charts' per-minute counters, kept ROLLUPS_RETENTION_DAYS. */
export const METRIC_ROLLUPS = { table: 'metric_rollups', column: 'minute' } as const;

export type PurgeTarget = (typeof EXPIRING)[number] | typeof SIGN_IN_ATTEMPTS | typeof METRIC_ROLLUPS;

/**
 * Deletes up to `limit` rows of the table whose `column` is before `before`, in one statement, and
 * returns how many. `FOR UPDATE SKIP LOCKED`: instances purging at the same time share the work
 * instead of waiting on each other, and a row a request is using is left for the next run.
 */
export async function deleteExpiredBatch(
  db: Kysely<Database>,
  target: PurgeTarget,
  before: Date,
  limit: number,
): Promise<number> {
  const result = await sql`
    delete from ${sql.table(target.table)}
    where ctid in (
      select ctid from ${sql.table(target.table)}
      where ${sql.ref(target.column)} < ${before}
      limit ${limit}
      for update skip locked
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
