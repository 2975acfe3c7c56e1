import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, IncidentSeverity, IncidentsTable, PlatformStatusValue } from '../../db/schema.js';

export type IncidentRow = Selectable<IncidentsTable>;

export function readPlatformState(db: Kysely<Database>) {
  return db
    .selectFrom('platform_state')
    .select(['status', 'message', 'updated_at'])
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
}

export async function writePlatformState(
  db: Kysely<Database>,
  state: { status: PlatformStatusValue; message: string | null; updatedAt: Date },
): Promise<void> {
  await db
    .updateTable('platform_state')
    .set({ status: state.status, message: state.message, updated_at: state.updatedAt })
    .where('id', '=', 1)
    .execute();
}

export function listOpenIncidents(db: Kysely<Database>): Promise<IncidentRow[]> {
  return db
    .selectFrom('incidents')
    .selectAll()
    .where('status', '=', 'open')
    .orderBy('started_at', 'desc')
    .execute();
}

export function insertIncident(
  db: Kysely<Database>,
  incident: { title: string; message: string | null; severity: IncidentSeverity; startedAt: Date },
): Promise<IncidentRow> {
  return db
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
}

/** Resolves an open incident; an incident already resolved is returned unchanged, an unknown id as undefined. */
export async function resolveIncident(
  db: Kysely<Database>,
  id: number,
  at: Date,
): Promise<IncidentRow | undefined> {
  const resolved = await db
    .updateTable('incidents')
    .set({ status: 'resolved', resolved_at: at })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .returningAll()
    .executeTakeFirst();
  return resolved ?? db.selectFrom('incidents').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The cheapest statement that proves the database answers (the readiness check). */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}
