import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { StoredAuditEvent } from './audit.repository.js';

/**
 * The operators' reads of the audit log (the console's audit page, its exports, `idp audit tail`):
 * events filtered by who acted, whom or what they were about, the action and a time range, newest
 * first a page at a time, and the names behind the `user:<id>` and `client:<client_id>` references.
 */

/** Events whose actor is one of `actors`, or whose subject is one of `subjects`: everything by or about a party. */
export interface AuditParty {
  actors: readonly string[];
  subjects: readonly string[];
}

export interface AuditLogQuery {
  /** Only events done by one of these actors (`operator:<id>`). */
  actors?: readonly string[];
  /** Only events by or about each of these parties (a user, a client): all of them must match. */
  parties?: readonly AuditParty[];
  action?: string;
  /** From this time on, included. */
  since?: Date;
  /** Before this time, excluded. */
  until?: Date;
  /** Keyset paging: only events with an id below this one. */
  beforeId?: number;
  limit: number;
}

const COLUMNS = ['id', 'at', 'actor', 'action', 'subject', 'ip', 'details'] as const;

/**
 * The events matching `query`, newest first (by id, the order they were appended). Served by the
 * indexes on actor, subject and at; the next page starts below the last id of this one.
 */
export async function findAuditEvents(
  db: Kysely<Database>,
  query: AuditLogQuery,
): Promise<StoredAuditEvent[]> {
  let select = db.selectFrom('audit_events').select(COLUMNS);
  if (query.actors) select = select.where('actor', 'in', [...query.actors]);
  for (const party of query.parties ?? []) {
    select = select.where((eb) =>
      eb.or([
        eb('actor', 'in', [...party.actors]),
        ...(party.subjects.length > 0 ? [eb('subject', 'in', [...party.subjects])] : []),
      ]),
    );
  }
  if (query.action !== undefined) select = select.where('action', '=', query.action);
  if (query.since) select = select.where('at', '>=', query.since);
  if (query.until) select = select.where('at', '<', query.until);
  if (query.beforeId !== undefined) select = select.where('id', '<', query.beforeId);
  const rows = await select.orderBy('id', 'desc').limit(query.limit).execute();
  return rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/** How many ids one lookup of names sends at most (a statement's parameters are bounded). */
const NAME_CHUNK = 1000;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += NAME_CHUNK) out.push(items.slice(i, i + NAME_CHUNK));
  return out;
}

/** The usernames of these user ids (deleted accounts keep theirs); unknown ids are left out. */
export async function usernamesOf(
  db: Kysely<Database>,
  ids: readonly number[],
): Promise<Map<number, string>> {
  const names = new Map<number, string>();
  for (const part of chunks([...new Set(ids)])) {
    const rows = await db.selectFrom('users').select(['id', 'username']).where('id', 'in', part).execute();
    for (const row of rows) names.set(Number(row.id), row.username);
  }
  return names;
}

/** The names of these clients by client_id; unknown ones are left out. */
export async function clientNamesOf(
  db: Kysely<Database>,
  clientIds: readonly string[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const part of chunks([...new Set(clientIds)])) {
    const rows = await db
      .selectFrom('clients')
      .select(['client_id', 'name'])
      .where('client_id', 'in', part)
      .execute();
    for (const row of rows) names.set(row.client_id, row.name);
  }
  return names;
}
