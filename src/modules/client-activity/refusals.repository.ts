import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

/** How many refused requests an application keeps: its owners read the latest ones only. */
export const REFUSALS_KEPT = 100;

/** One refused request, as its application's owners read it. */
export interface RefusalRow {
  id: number;
  at: Date;
  endpoint: string;
  error: string;
  reason: string;
  received: Record<string, string | string[]>;
}

export interface NewRefusal {
  /** The client_id the request named; nothing is written unless it is a client's, not deleted. */
  clientId: string;
  at: Date;
  endpoint: string;
  error: string;
  reason: string;
  received: Record<string, string | string[]>;
}

/**
 * Adds a refused request to its application's log and trims the log to its latest REFUSALS_KEPT,
 * in one statement: the client is found by its client_id in the same statement, so a client_id
 * nobody registered (or a deleted application's) writes nothing. The trim sees the rows as they
 * were before the insert (one snapshot), so it keeps REFUSALS_KEPT - 1 of them beside the new one;
 * two refusals written at once may leave one more row until the next. Returns whether a row was
 * written (the client exists).
 */
export async function insertRefusal(db: Kysely<Database>, refusal: NewRefusal): Promise<boolean> {
  const result = await sql<{ client_pk: number }>`
    with app as (
      select id from clients where client_id = ${refusal.clientId} and deleted_at is null
    ), added as (
      insert into client_refusals (client_pk, at, endpoint, error, reason, received)
      select id, ${refusal.at}, ${refusal.endpoint}, ${refusal.error}, ${refusal.reason},
        ${JSON.stringify(refusal.received)}::jsonb
      from app
      returning client_pk
    ), trimmed as (
      delete from client_refusals
      where client_pk = (select id from app)
        and id < (
          select id from client_refusals
          where client_pk = (select id from app)
          order by id desc
          offset ${REFUSALS_KEPT - 2} limit 1
        )
    )
    select client_pk from added`.execute(db);
  return result.rows.length > 0;
}

/** The latest `limit` refused requests of one application, newest first. */
export async function listRefusals(
  db: Kysely<Database>,
  clientPk: number,
  limit: number,
): Promise<RefusalRow[]> {
  const rows = await db
    .selectFrom('client_refusals')
    .select(['id', 'at', 'endpoint', 'error', 'reason', 'received'])
    .where('client_pk', '=', clientPk)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    ...row,
    id: Number(row.id),
    at: new Date(row.at),
    received: row.received as Record<string, string | string[]>,
  }));
}
