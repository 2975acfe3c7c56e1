import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { InvalidRequest } from '../../lib/errors.js';
import { findUserById, findUserByUsername } from '../accounts/accounts.repository.js';
import { findClientByClientId } from '../clients/clients.repository.js';
import type { StoredAuditEvent } from './audit.repository.js';
import { type AuditLogQuery, clientNamesOf, findAuditEvents, usernamesOf } from './audit-log.repository.js';

/**
 * The audit log as operators read it (the console's audit page and exports, `idp audit tail`):
 * filters given as people type them (a username or an id, a client_id, an action, a time as an ISO
 * date or a duration back from now), and every event with the names behind its references.
 */

/** A filter the operator typed that names nothing, or is malformed: which field, and why. */
export class AuditFilterError extends InvalidRequest {
  constructor(
    readonly field: keyof AuditFilterInput,
    readonly reason: 'unknown_account' | 'unknown_client' | 'malformed_action' | 'malformed_time' | 'range',
    description: string,
  ) {
    super(description);
  }
}

/** The filters as typed; empty strings are no filter. */
export interface AuditFilterInput {
  operator?: string | undefined;
  user?: string | undefined;
  client?: string | undefined;
  action?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

/** The filters resolved: the accounts and the client they name, the time range as instants. */
export interface AuditFilter {
  operator?: { id: number; username: string };
  user?: { id: number; username: string };
  client?: { clientId: string; name: string };
  action?: string;
  since?: Date;
  until?: Date;
}

/** An event with the names behind its actor and subject (null when it has none, or it is gone). */
export interface NamedAuditEvent extends StoredAuditEvent {
  actorName: string | null;
  subjectName: string | null;
}

const DURATION = /^(\d{1,6})([smhdw])$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
/** A date, or a date and time (minutes at least) with an optional zone; without one it is UTC. */
const ISO_TIME = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * A point in time as an operator types it: a duration back from `now` (`15m`, `2h`, `7d`, `1w`,
 * `30s`) or an ISO 8601 date or date-time (`2026-06-01`, `2026-06-01T12:00Z`; without a zone, UTC).
 * Undefined when it is neither.
 */
export function parseAuditTime(text: string, now: Date): Date | undefined {
  const trimmed = text.trim();
  const duration = DURATION.exec(trimmed);
  if (duration) return new Date(now.getTime() - Number(duration[1]) * (UNIT_MS[duration[2] as string] ?? 0));
  const iso = ISO_TIME.exec(trimmed);
  if (!iso) return undefined;
  const [, day, time, zone] = iso;
  const at = new Date(time ? `${day}T${time}${zone ? zone.toUpperCase() : 'Z'}` : `${day}T00:00:00Z`);
  // Date accepts 2026-02-31 as March 3rd: refuse a day that is not in its month.
  if (Number.isNaN(at.getTime())) return undefined;
  if (!zone && at.toISOString().slice(0, 10) !== day) return undefined;
  return at;
}

/** What the usage texts say a time may be. */
export const AUDIT_TIME_HINT =
  'an ISO date or time (2026-06-01, 2026-06-01T12:00Z; UTC without a zone) or a duration back from now (30s, 15m, 2h, 7d, 1w)';

const ACTION = /^[a-z][a-z0-9_]{0,63}$/;

function given(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  return trimmed ? trimmed : undefined;
}

/** An account by username (any case) or by id (usernames are never all digits). */
async function accountNamed(db: Kysely<Database>, text: string) {
  if (text.length > 128) return undefined;
  if (/^\d{1,15}$/.test(text)) return findUserById(db, Number(text));
  return findUserByUsername(db, text.replace(/^@/, ''));
}

/** The filters as typed, resolved; an unknown account or client, or a malformed value, is an AuditFilterError. */
export async function resolveAuditFilter(
  db: Kysely<Database>,
  now: Date,
  input: AuditFilterInput,
): Promise<AuditFilter> {
  const filter: AuditFilter = {};
  for (const field of ['operator', 'user'] as const) {
    const text = given(input[field]);
    if (text === undefined) continue;
    const account = await accountNamed(db, text);
    if (!account)
      throw new AuditFilterError(
        field,
        'unknown_account',
        `no account with the username or id "${text.slice(0, 64)}"`,
      );
    filter[field] = { id: account.id, username: account.username };
  }
  const clientId = given(input.client);
  if (clientId !== undefined) {
    const client = clientId.length <= 200 ? await findClientByClientId(db, clientId) : undefined;
    if (!client)
      throw new AuditFilterError(
        'client',
        'unknown_client',
        `no client with the client_id "${clientId.slice(0, 64)}"`,
      );
    filter.client = { clientId: client.clientId, name: client.name };
  }
  const action = given(input.action);
  if (action !== undefined) {
    if (!ACTION.test(action))
      throw new AuditFilterError('action', 'malformed_action', 'an action is a name such as sign_in_failed');
    filter.action = action;
  }
  for (const field of ['since', 'until'] as const) {
    const text = given(input[field]);
    if (text === undefined) continue;
    const at = parseAuditTime(text, now);
    if (!at) throw new AuditFilterError(field, 'malformed_time', `--${field} must be ${AUDIT_TIME_HINT}`);
    filter[field] = at;
  }
  if (filter.since && filter.until && filter.since >= filter.until)
    throw new AuditFilterError('until', 'range', 'the end of the time range must be after its start');
  return filter;
}

/** The repository's query for a resolved filter. */
function queryOf(filter: AuditFilter, page: { beforeId?: number | undefined; limit: number }): AuditLogQuery {
  const parties = [];
  if (filter.user) {
    const self = `user:${filter.user.id}`;
    // What they did, in the console too; a failed sign-in names the account only by the username
    // it tried (`username:<name>`).
    parties.push({
      actors: [self, `operator:${filter.user.id}`],
      subjects: [self, `username:${filter.user.username.toLowerCase().slice(0, 64)}`],
    });
  }
  if (filter.client) {
    const ref = `client:${filter.client.clientId}`;
    parties.push({ actors: [ref], subjects: [ref] });
  }
  return {
    ...(filter.operator ? { actors: [`operator:${filter.operator.id}`] } : {}),
    parties,
    ...(filter.action ? { action: filter.action } : {}),
    ...(filter.since ? { since: filter.since } : {}),
    ...(filter.until ? { until: filter.until } : {}),
    ...(page.beforeId !== undefined ? { beforeId: page.beforeId } : {}),
    limit: page.limit,
  };
}

const USER_REF = /^(?:user|operator):(\d{1,15})$/;
const CLIENT_REF = /^client:(.+)$/;

/** The events with the usernames and client names behind their references, in two lookups. */
export async function nameAuditEvents(
  db: Kysely<Database>,
  events: readonly StoredAuditEvent[],
): Promise<NamedAuditEvent[]> {
  const refs = events.flatMap((event) => [event.actor, event.subject ?? '']);
  const userIds = refs.flatMap((ref) => {
    const m = USER_REF.exec(ref);
    return m ? [Number(m[1])] : [];
  });
  const clientIds = refs.flatMap((ref) => {
    const m = CLIENT_REF.exec(ref);
    return m ? [m[1] as string] : [];
  });
  const [users, clients] = await Promise.all([usernamesOf(db, userIds), clientNamesOf(db, clientIds)]);
  const nameOf = (ref: string | null, event: StoredAuditEvent): string | null => {
    if (ref === null) return null;
    const user = USER_REF.exec(ref);
    if (user) {
      const recorded = ref.startsWith('operator:') ? event.details.operator : undefined;
      return users.get(Number(user[1])) ?? (typeof recorded === 'string' ? recorded : null);
    }
    const client = CLIENT_REF.exec(ref);
    return client ? (clients.get(client[1] as string) ?? null) : null;
  };
  return events.map((event) => ({
    ...event,
    actorName: nameOf(event.actor, event),
    subjectName: nameOf(event.subject, event),
  }));
}

/** One page of the filtered log, newest first, and the id the next (older) page starts below. */
export async function listAuditLog(
  db: Kysely<Database>,
  filter: AuditFilter,
  page: { beforeId?: number | undefined; limit: number },
): Promise<{ events: NamedAuditEvent[]; nextBefore: number | null }> {
  const rows = await findAuditEvents(db, queryOf(filter, { ...page, limit: page.limit + 1 }));
  const events = rows.slice(0, page.limit);
  const more = rows.length > page.limit;
  return { events: await nameAuditEvents(db, events), nextBefore: more ? (events.at(-1)?.id ?? null) : null };
}

/** The most events one export holds: the newest ones matching, the page says so. */
export const AUDIT_EXPORT_MAX_ROWS = 10_000;

/** The filtered log for an export: at most AUDIT_EXPORT_MAX_ROWS events, newest first, and whether more matched. */
export async function exportAuditLog(
  db: Kysely<Database>,
  filter: AuditFilter,
): Promise<{ events: NamedAuditEvent[]; truncated: boolean }> {
  const { events, nextBefore } = await listAuditLog(db, filter, { limit: AUDIT_EXPORT_MAX_ROWS });
  return { events, truncated: nextBefore !== null };
}

/** An event as the exports and `idp audit tail --json` give it: the raw references and their names. */
export function presentAuditEvent(event: NamedAuditEvent) {
  return {
    id: event.id,
    at: event.at.toISOString(),
    actor: event.actor,
    actor_name: event.actorName,
    action: event.action,
    subject: event.subject,
    subject_name: event.subjectName,
    ip: event.ip,
    details: event.details,
  };
}

export type PresentedAuditEvent = ReturnType<typeof presentAuditEvent>;
