import { type Kysely, sql } from 'kysely';

/**
 * Profiles, browser sessions, the OAuth 2.0 / OpenID Connect state (pending authorization
 * requests, consents, codes, grants, access and refresh tokens) and the id_token signing keys.
 * Every code, token and session id is stored only as its SHA-256 hash.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('avatar_url', 'text')
    .addColumn('game_name', 'text')
    .addColumn('game_url', 'text')
    .addColumn('tag_label', 'text')
    .addColumn('tag_kind', 'text')
    .addColumn('tag_slug', 'text')
    .execute();
  await sql`alter table users add constraint users_tag_complete check (
    (tag_label is null) = (tag_kind is null) and (tag_kind is null) = (tag_slug is null))`.execute(db);

  await db.schema
    .createTable('browser_sessions')
    .addColumn('id_hash', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('auth_time', 'timestamptz', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('ip', 'text')
    .execute();
  await db.schema.createIndex('browser_sessions_user_idx').on('browser_sessions').column('user_id').execute();
  await db.schema
    .createIndex('browser_sessions_expires_idx')
    .on('browser_sessions')
    .column('expires_at')
    .execute();

  // An authorize request waiting for sign-in or consent: the consent form names it, so a consent
  // given for one request can never approve another.
  await db.schema
    .createTable('authorization_requests')
    .addColumn('id_hash', 'text', (col) => col.primaryKey())
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (col) => col.notNull())
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('nonce', 'text')
    .addColumn('code_challenge', 'text')
    .addColumn('prompt', 'text')
    // prompt=login: the session that was signed in when the request came; only another one will do.
    .addColumn('stale_session_hash', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('consumed_at', 'timestamptz')
    .execute();

  // What a user allowed a client: remembered so a later request for the same or fewer scopes skips the page.
  await db.schema
    .createTable('consents')
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull())
    .addPrimaryKeyConstraint('consents_pkey', ['user_id', 'client_pk'])
    .execute();

  await db.schema
    .createTable('authorization_codes')
    .addColumn('code_hash', 'text', (col) => col.primaryKey())
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (col) => col.notNull())
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('nonce', 'text')
    .addColumn('auth_time', 'timestamptz', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('consumed_at', 'timestamptz')
    .execute();

  // A grant: what one code exchange (or one mobile sign-in) started. Its tokens live and die together.
  await db.schema
    .createTable('grants')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('code_hash', 'text', (col) => col.unique())
    .addColumn('auth_time', 'timestamptz', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('grants_user_client_idx')
    .on('grants')
    .columns(['user_id', 'client_pk'])
    .execute();

  await db.schema
    .createTable('access_tokens')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('grant_id', 'bigint', (col) => col.notNull().references('grants.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('access_tokens_grant_idx').on('access_tokens').column('grant_id').execute();
  await db.schema.createIndex('access_tokens_expires_idx').on('access_tokens').column('expires_at').execute();

  await db.schema
    .createTable('refresh_tokens')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('grant_id', 'bigint', (col) => col.notNull().references('grants.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    // Set when the token was exchanged for a new one: presenting it again is reuse.
    .addColumn('rotated_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('refresh_tokens_grant_idx').on('refresh_tokens').column('grant_id').execute();

  // id_token signing keys: the newest key that is not retired signs; every key not retired verifies.
  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (col) => col.primaryKey())
    .addColumn('algorithm', 'text', (col) => col.notNull())
    .addColumn('private_key_pem', 'text', (col) => col.notNull())
    .addColumn('public_jwk', 'jsonb', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('retired_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'signing_keys',
    'refresh_tokens',
    'access_tokens',
    'grants',
    'authorization_codes',
    'consents',
    'authorization_requests',
    'browser_sessions',
  ]) {
    await db.schema.dropTable(table).execute();
  }
  await sql`alter table users drop constraint users_tag_complete`.execute(db);
  for (const column of ['avatar_url', 'game_name', 'game_url', 'tag_label', 'tag_kind', 'tag_slug']) {
    await db.schema.alterTable('users').dropColumn(column).execute();
  }
}
