import { type Kysely, sql } from 'kysely';

/**
 * DPoP (RFC 9449) and public clients.
 *
 * - `access_tokens.jkt`, `refresh_tokens.jkt`: the RFC 7638 thumbprint of the key a token is bound
 *   to (RFC 9449 §6); null for a bearer token.
 * - `clients.is_public`: a client without a secret (`token_endpoint_auth_method: none`, RFC 7591
 *   §2), so `secret_hash` becomes nullable, and a public client has none.
 * - `clients.require_dpop`: `dpop_bound_access_tokens` (RFC 9449 §5.2).
 * - `dpop_proofs`: the proofs already accepted (RFC 9449 §11.1), the SHA-256 of thumbprint and
 *   `jti`, kept until the proof could no longer be accepted anyway.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('access_tokens').addColumn('jkt', 'text').execute();
  await db.schema.alterTable('refresh_tokens').addColumn('jkt', 'text').execute();
  await db.schema
    .alterTable('clients')
    .addColumn('is_public', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
  await db.schema
    .alterTable('clients')
    .addColumn('require_dpop', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
  await sql`alter table clients alter column secret_hash drop not null`.execute(db);
  // A confidential client always has a secret, a public one never.
  await sql`alter table clients add constraint clients_public_secret_check
    check ((is_public and secret_hash is null) or (not is_public and secret_hash is not null))`.execute(db);

  await db.schema
    .createTable('dpop_proofs')
    .addColumn('proof_hash', 'text', (col) => col.primaryKey())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await sql`create index dpop_proofs_expires_idx on dpop_proofs (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('dpop_proofs').execute();
  await sql`alter table clients drop constraint clients_public_secret_check`.execute(db);
  await sql`delete from clients where secret_hash is null`.execute(db);
  await sql`alter table clients alter column secret_hash set not null`.execute(db);
  await db.schema.alterTable('clients').dropColumn('require_dpop').execute();
  await db.schema.alterTable('clients').dropColumn('is_public').execute();
  await db.schema.alterTable('refresh_tokens').dropColumn('jkt').execute();
  await db.schema.alterTable('access_tokens').dropColumn('jkt').execute();
}
