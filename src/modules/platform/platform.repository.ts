import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, IncidentSeverity, IncidentsTable, PlatformStatusValue } from '../../db/schema.js';

/** An incident as the operator opened (and maybe resolved) it. */
export interface IncidentRecord {
  id: number;
  title: string;
  message: string | null;
  severity: IncidentSeverity;
  status: 'open' | 'resolved';
  startedAt: Date;
  resolvedAt: Date | null;
}

export interface PlatformState {
  status: PlatformStatusValue;
  message: string | null;
  updatedAt: Date;
}

function toIncident(row: Selectable<IncidentsTable>): IncidentRecord {
  return {
    id: row.id,
    title: row.title,
    message: row.message,
    severity: row.severity,
    status: row.status,
    startedAt: row.started_at,
    resolvedAt: row.resolved_at,
  };
}

export async function readPlatformState(db: Kysely<Database>): Promise<PlatformState> {
  const row = await db
    .selectFrom('platform_state')
    .select(['status', 'message', 'updated_at'])
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  return { status: row.status, message: row.message, updatedAt: row.updated_at };
}

export async function writePlatformState(db: Kysely<Database>, state: PlatformState): Promise<void> {
  await db
    .updateTable('platform_state')
    .set({ status: state.status, message: state.message, updated_at: state.updatedAt })
    .where('id', '=', 1)
    .execute();
}

export async function listOpenIncidents(db: Kysely<Database>): Promise<IncidentRecord[]> {
  const rows = await db
    .selectFrom('incidents')
    .selectAll()
    .where('status', '=', 'open')
    .orderBy('started_at', 'desc')
    .execute();
  return rows.map(toIncident);
}

export async function insertIncident(
  db: Kysely<Database>,
  incident: { title: string; message: string | null; severity: IncidentSeverity; startedAt: Date },
): Promise<IncidentRecord> {
  const row = await db
    .insertInto('incidents')
    .values({
      title: incident.title,
      message: incident.message,
      severity: incident.severity,
      status: 'open',
      started_at: incident.startedAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toIncident(row);
}

/** Resolves an open incident; an incident already resolved is returned unchanged, an unknown id as undefined. */
export async function resolveIncident(
  db: Kysely<Database>,
  id: number,
  at: Date,
): Promise<IncidentRecord | undefined> {
  const resolved =
    (await db
      .updateTable('incidents')
      .set({ status: 'resolved', resolved_at: at })
      .where('id', '=', id)
      .where('status', '=', 'open')
      .returningAll()
      .executeTakeFirst()) ??
    (await db.selectFrom('incidents').selectAll().where('id', '=', id).executeTakeFirst());
  return resolved && toIncident(resolved);
}

/** The cheapest statement that proves the database answers (the readiness check). */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}
