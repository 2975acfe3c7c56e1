import type { Kysely, Selectable } from 'kysely';
import type { AuditEventsTable, Database } from '../../db/schema.js';

export type AuditEventRow = Selectable<AuditEventsTable>;

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
  | 'key_rotated'
  | 'key_retired'
  | 'wallet_charged'
  | 'wallet_credited';

/** Appends one event; run it on the transaction of the change it records, when there is one. */
export async function recordAudit(db: Kysely<Database>, event: AuditEvent): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      at: event.at,
      actor: event.actor,
      action: event.action,
      subject: event.subject ?? null,
      ip: event.ip ?? null,
      details: JSON.stringify(event.details ?? {}),
    })
    .execute();
}

/** The latest `limit` events, oldest first (as `tail` prints a log). */
export async function latestAuditEvents(db: Kysely<Database>, limit: number): Promise<AuditEventRow[]> {
  const rows = await db.selectFrom('audit_events').selectAll().orderBy('id', 'desc').limit(limit).execute();
  return rows.reverse();
}

/** An event of an HTTP request: the time from the clock and the client IP of the request. */
export function auditRequest(
  deps: { db: Kysely<Database>; clock: { now(): Date } },
  request: { ip: string },
  event: Omit<AuditEvent, 'at' | 'ip'>,
): Promise<void> {
  return recordAudit(deps.db, { ...event, at: deps.clock.now(), ip: request.ip });
}
