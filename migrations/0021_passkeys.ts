import { type Kysely, sql } from 'kysely';

/**
 * Passkeys (WebAuthn Level 3). `passkeys` holds each registered credential's
 * public key and state: never a secret. `webauthn_challenges` holds the ceremonies under way: the
 * browser keeps a random ceremony id in an HttpOnly cookie, the table only its SHA-256 and the
 * challenge's SHA-256; a row is consumed once (DELETE … RETURNING) and lives 5 minutes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'serial', (col) => col.primaryKey())
    .addColumn('user_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
    // WebAuthn §6.1: the credential id, base64url; at most 1023 bytes as raw bytes.
    .addColumn('credential_id', 'text', (col) => col.notNull().unique())
    // The COSE public key (RFC 9052 §7), base64url.
    .addColumn('public_key', 'text', (col) => col.notNull())
    // WebAuthn §6.1.1: the signature counter, a 32-bit unsigned integer.
    .addColumn('counter', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('transports', sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'`))
    .addColumn('aaguid', 'text', (col) => col.notNull())
    .addColumn('backup_eligible', 'boolean', (col) => col.notNull())
    .addColumn('backed_up', 'boolean', (col) => col.notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await sql`create index passkeys_user_idx on passkeys (user_id, id)`.execute(db);

  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('ceremony_hash', 'text', (col) => col.primaryKey())
    .addColumn('challenge_hash', 'text', (col) => col.notNull())
    .addColumn('purpose', 'text', (col) => col.notNull().check(sql`purpose in ('register', 'authenticate')`))
    // Registration only: the account the new passkey is for.
    .addColumn('user_id', 'integer', (col) => col.references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await sql`create index webauthn_challenges_expires_idx on webauthn_challenges (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webauthn_challenges').execute();
  await db.schema.dropTable('passkeys').execute();
}
