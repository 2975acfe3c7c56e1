import { type Kysely, sql } from 'kysely';

/**
 * Pushed authorization requests (RFC 9126). A row is a request a client pushed
 * and checked, waiting for the browser at the authorization endpoint: only the SHA-256 of the
 * request_uri's random part is stored, it lives 60 seconds and is consumed once
 * (DELETE … RETURNING). `parameters` holds the checked authorize parameters, never the client's
 * credentials. `require_pushed_authorization_requests` makes PAR mandatory for one client.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pushed_authorization_requests')
    .addColumn('request_uri_hash', 'text', (col) => col.primaryKey())
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('parameters', 'jsonb', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await sql`create index pushed_authorization_requests_expires_idx on pushed_authorization_requests (expires_at)`.execute(
    db,
  );
  await db.schema
    .alterTable('clients')
    .addColumn('require_pushed_authorization_requests', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('require_pushed_authorization_requests').execute();
  await db.schema.dropTable('pushed_authorization_requests').execute();
}
