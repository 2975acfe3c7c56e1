import { type Kysely, sql } from 'kysely';

/**
 * Site owners register and run their own applications (the developer portal, RFC 7591 dynamic
 * registration and RFC 7592 management):
 * - `clients` learns how it was registered, when an operator approved it (null: not reviewed;
 *   existing clients were made by operators, so they count as approved), when its owners asked for
 *   the wallet right, when it was deleted (the row stays: tokens and the audit log name it), and the
 *   hash of its RFC 7592 registration access token;
 * - `client_owners`: the owner and co-owners of an application;
 * - `client_secrets`: several secrets per client, each with its own expiry, so that a site rotates
 *   without downtime; the current secret and a rotation's previous one move here;
 * - `registration_tokens`: RFC 7591 §3 initial access tokens (hashes only), single or N uses;
 * - `client_refusals`: the latest refused requests of each application, with the values received;
 * - an index for each application's active users per day, read from its access tokens.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients
    add column approved_at timestamptz,
    add column registered_via text not null default 'operator'
      constraint clients_registered_via check (registered_via in ('operator', 'portal', 'registration')),
    add column wallet_requested_at timestamptz,
    add column deleted_at timestamptz,
    add column registration_access_token_hash text
      constraint clients_registration_access_token_hash_key unique`.execute(db);
  await sql`update clients set approved_at = created_at`.execute(db);

  await sql`create table client_owners (
    client_pk integer not null references clients (id),
    user_id integer not null references users (id),
    role text not null constraint client_owners_role check (role in ('owner', 'co_owner')),
    added_at timestamptz not null,
    primary key (client_pk, user_id)
  )`.execute(db);
  await sql`create index client_owners_user_idx on client_owners (user_id)`.execute(db);

  await sql`create table client_secrets (
    id bigint generated always as identity primary key,
    client_pk integer not null references clients (id),
    secret_hash text not null,
    -- The secret's last four characters, so that owners can tell their secrets apart.
    hint text not null,
    created_at timestamptz not null,
    expires_at timestamptz
  )`.execute(db);
  await sql`create index client_secrets_client_idx on client_secrets (client_pk)`.execute(db);
  await sql`insert into client_secrets (client_pk, secret_hash, hint, created_at, expires_at)
    select id, secret_hash, '', updated_at, null from clients where secret_hash is not null`.execute(db);
  await sql`insert into client_secrets (client_pk, secret_hash, hint, created_at, expires_at)
    select id, previous_secret_hash, '', updated_at, previous_secret_expires_at from clients
    where previous_secret_hash is not null`.execute(db);

  await sql`create table registration_tokens (
    id bigint generated always as identity primary key,
    token_hash text not null constraint registration_tokens_token_hash_key unique,
    -- Applications registered with it belong to this account; null for an operator's token.
    owner_user_id integer references users (id),
    -- 'cli', or 'user:<id>' for a token made in the portal.
    created_by text not null,
    uses_left integer not null constraint registration_tokens_uses_left check (uses_left >= 0),
    created_at timestamptz not null,
    expires_at timestamptz not null
  )`.execute(db);
  await sql`create index registration_tokens_owner_idx on registration_tokens (owner_user_id)`.execute(db);

  await sql`create table client_refusals (
    id bigint generated always as identity primary key,
    client_pk integer not null references clients (id),
    at timestamptz not null,
    endpoint text not null,
    error text not null,
    reason text not null,
    received jsonb not null default '{}'
  )`.execute(db);
  await sql`create index client_refusals_client_idx on client_refusals (client_pk, id desc)`.execute(db);

  await sql`create index access_tokens_client_created_idx on access_tokens (client_pk, created_at, user_id)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index access_tokens_client_created_idx`.execute(db);
  await sql`drop table client_refusals`.execute(db);
  await sql`drop table registration_tokens`.execute(db);
  await sql`drop table client_secrets`.execute(db);
  await sql`drop table client_owners`.execute(db);
  await sql`alter table clients
    drop column registration_access_token_hash,
    drop column deleted_at,
    drop column wallet_requested_at,
    drop column registered_via,
    drop column approved_at`.execute(db);
}
