import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { rollups } from '../rollups/rollup-recorder.js';

/** What happened, by whom, to what, from where. Never a secret, token or password in `details`. */
export interface AuditEvent {
  at: Date;
  actor: string;
  action: AuditAction;
  subject?: string | null;
  ip?: string | null;
  details?: Record<string, unknown>;
}

export type AuditAction =
  | 'sign_in'
  | 'sign_in_failed'
  | 'sign_up'
  | 'consent_allowed'
  | 'consent_denied'
  | 'app_revoked'
  | 'token_revoked'
  | 'device_signed_in'
  | 'device_signed_out'
  | 'client_created'
  | 'client_updated'
  | 'client_secret_rotated'
  | 'client_secret_added'
  | 'client_secret_expired'
  | 'client_disabled'
  | 'client_enabled'
  | 'key_rotated'
  | 'key_retired'
  | 'wallet_charged'
  | 'wallet_credited'
  | 'profile_updated'
  | 'password_changed'
  | 'password_change_failed'
  | 'account_exported'
  | 'account_deleted'
  | 'email_verified'
  | 'password_reset_sent'
  | 'password_reset'
  | 'email_change_requested'
  | 'email_change_failed'
  | 'email_changed'
  | 'totp_enrolment_started'
  | 'totp_enabled'
  | 'totp_disabled'
  | 'totp_disable_failed'
  | 'recovery_codes_renewed'
  | 'recovery_code_used'
  | 'second_factor_passed'
  | 'second_factor_failed'
  | 'second_factors_reset'
  | 'second_factor_locked'
  | 'sign_in_unlocked'
  | 'passkey_added'
  | 'passkey_renamed'
  | 'passkey_removed'
  | 'reauthenticated'
  | 'reauthentication_failed'
  | 'signed_out'
  | 'user_disabled'
  | 'user_enabled'
  | 'user_signed_out_everywhere'
  | 'email_marked_verified'
  | 'premium_granted'
  | 'wallet_debited'
  | 'backchannel_logout_failed'
  | 'backchannel_logout_retried'
  | 'mail_retried'
  | 'incident_opened'
  | 'incident_resolved'
  | 'operator_granted'
  | 'operator_revoked'
  | 'console_entered'
  | 'console_entry_failed'
  | 'console_reauthenticated'
  | 'console_left'
  | 'client_deleted'
  | 'client_approved'
  | 'client_owner_added'
  | 'client_owner_removed'
  | 'client_wallet_requested'
  | 'client_wallet_granted'
  | 'registration_token_created'
  | 'registration_token_revoked'
  | 'provider_added'
  | 'provider_updated'
  | 'provider_removed'
  | 'upstream_linked'
  | 'upstream_unlinked'
  | 'upstream_sign_in_failed'
  | 'device_code_allowed'
  | 'device_code_denied'
  | 'device_code_failed';

/** The longest string an event keeps in any field; the log is append-only, so nothing in it is unbounded. */
export const AUDIT_TEXT_MAX_LENGTH = 200;
/** Values in `details` beyond this many (in arrays and objects) are not kept. */
const AUDIT_DETAIL_MAX_ITEMS = 20;

function bounded(text: string): string {
  return text.length > AUDIT_TEXT_MAX_LENGTH ? `${text.slice(0, AUDIT_TEXT_MAX_LENGTH)}…` : text;
}

/** `details` with every string cut to AUDIT_TEXT_MAX_LENGTH and every list and object to AUDIT_DETAIL_MAX_ITEMS. */
function boundedDetails(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return bounded(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= 4) return '…';
  if (Array.isArray(value))
    return value.slice(0, AUDIT_DETAIL_MAX_ITEMS).map((item) => boundedDetails(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, AUDIT_DETAIL_MAX_ITEMS)
      .map(([key, item]) => [bounded(key), boundedDetails(item, depth + 1)]),
  );
}

/** Appends one event; run it on the transaction of the change it records, when there is one. */
export async function recordAudit(db: Kysely<Database>, event: AuditEvent): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      at: event.at,
      actor: bounded(event.actor),
      action: event.action,
      subject: event.subject == null ? null : bounded(event.subject),
      ip: event.ip == null ? null : bounded(event.ip),
      details: JSON.stringify(boundedDetails(event.details ?? {})),
    })
    .execute();
  rollups.audit(event.action, event.details);
}

/** An event as the log keeps it. */
export interface StoredAuditEvent {
  id: number;
  at: Date;
  actor: string;
  /** An AuditAction, or an action an older version recorded. */
  action: string;
  subject: string | null;
  ip: string | null;
  details: Record<string, unknown>;
}

/** The latest `limit` events, oldest first (as `tail` prints a log). */
export async function latestAuditEvents(db: Kysely<Database>, limit: number): Promise<StoredAuditEvent[]> {
  const rows = await db
    .selectFrom('audit_events')
    .select(['id', 'at', 'actor', 'action', 'subject', 'ip', 'details'])
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse();
}

/** An event of an HTTP request: the time from the clock and the client IP of the request. */
export function auditRequest(
  db: Kysely<Database>,
  ctx: Context,
  request: { ip: string },
  event: Omit<AuditEvent, 'at' | 'ip'>,
): Promise<void> {
  return recordAudit(db, { ...event, at: ctx.clock.now(), ip: request.ip });
}

/** How many events of `action` (about `subject`, when given) were recorded since `since`: limits read it. */
export async function countEventsSince(
  db: Kysely<Database>,
  action: AuditAction,
  since: Date,
  subject?: string,
): Promise<number> {
  let query = db
    .selectFrom('audit_events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('at', '>', since)
    .where('action', '=', action);
  if (subject !== undefined) query = query.where('subject', '=', subject);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The events about one user, oldest first (the data export): those they did (`user:<id>`), those
 * done to them, and the failed sign-ins that named their username (`username:<name>`).
 */
export async function listAuditEventsAbout(
  db: Kysely<Database>,
  user: { id: number; username: string },
): Promise<StoredAuditEvent[]> {
  const self = `user:${user.id}`;
  return db
    .selectFrom('audit_events')
    .select(['id', 'at', 'actor', 'action', 'subject', 'ip', 'details'])
    .where((eb) =>
      eb.or([
        eb('actor', '=', self),
        eb('subject', 'in', [self, `username:${user.username.toLowerCase().slice(0, 64)}`]),
      ]),
    )
    .orderBy('id')
    .execute();
}

/**
 * How many events `actor` recorded since `since` about applications (`client:` subjects) or with
 * one of `actions`, and the oldest of them: the developer portal's changes per hour
 * (DEVELOPER_CHANGES_PER_HOUR).
 */
export async function countRecentChanges(
  db: Kysely<Database>,
  input: { actor: string; since: Date; actions: readonly AuditAction[] },
): Promise<{ count: number; oldest: Date | null }> {
  const row = await db
    .selectFrom('audit_events')
    .select((eb) => [eb.fn.countAll<string>().as('count'), eb.fn.min('at').as('oldest')])
    .where('actor', '=', input.actor)
    .where('at', '>', input.since)
    .where((eb) => eb.or([eb('subject', 'like', 'client:%'), eb('action', 'in', [...input.actions])]))
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), oldest: row.oldest === null ? null : new Date(row.oldest) };
}
