import { type Kysely, sql } from 'kysely';

/**
 * One value sealed under the running service's `COOKIE_SECRET` (src/lib/sealed-secret.ts), written
 * at its start. A command that seals a secret in another process (`idp providers` on PostgreSQL)
 * opens it first: a shell without the service's secret must not store what the service cannot open.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table sealing_key_check (
    id smallint primary key default 1 constraint sealing_key_check_single check (id = 1),
    sealed text not null,
    updated_at timestamptz not null
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table sealing_key_check`.execute(db);
}
