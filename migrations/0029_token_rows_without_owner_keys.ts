import { type Kysely, sql } from 'kysely';

/**
 * Codes, grants and access tokens keep their user and client ids without foreign keys (their
 * grant ids keep theirs).
 *
 * Like the ledger's (migrations/0028), these constraints could never fail: the ids come from the
 * signed-in user and the authenticated client, or from the code or grant the same statement reads,
 * and users and clients are never deleted (a deleted account is anonymized and its grants revoked,
 * a client disabled), so their cascades never ran either. Each checked its row at commit with a
 * `FOR KEY SHARE` lock and a WAL record: four per code exchange, two per refresh, on the user's row
 * and on the client's row that all of a site's exchanges share (a multixact). The writes of an
 * exchange cost PostgreSQL 283 µs and 16.1 WAL records with them, 191–216 µs and 13.0 without
 * (pgbench, 10 connections; docs/performance.md "Foreign keys").
 */
const DROPPED = [
  ['authorization_codes', 'authorization_codes_user_id_fkey', 'user_id', 'users'],
  ['authorization_codes', 'authorization_codes_client_pk_fkey', 'client_pk', 'clients'],
  ['grants', 'grants_user_id_fkey', 'user_id', 'users'],
  ['grants', 'grants_client_pk_fkey', 'client_pk', 'clients'],
  ['access_tokens', 'access_tokens_user_id_fkey', 'user_id', 'users'],
  ['access_tokens', 'access_tokens_client_pk_fkey', 'client_pk', 'clients'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [table, constraint] of DROPPED) {
    await sql`alter table ${sql.table(table)} drop constraint ${sql.id(constraint)}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [table, constraint, column, parent] of DROPPED) {
    await sql`alter table ${sql.table(table)} add constraint ${sql.id(constraint)}
      foreign key (${sql.id(column)}) references ${sql.table(parent)} (id) on delete cascade`.execute(db);
  }
}
