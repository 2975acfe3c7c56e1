import { type Kysely, sql } from 'kysely';

/**
 * Sign-in through an account elsewhere (a generic OpenID provider, GitHub, Google, Apple):
 * - `upstream_providers`: what operators configure; the client secret and Apple's private key are
 *   sealed (lib/sealed-secret.ts), since they must be read back to talk to the provider;
 * - `upstream_links`: an account's link to a provider's stable subject (`iss` + `sub`, GitHub's
 *   numeric id), the only thing a later sign-in is matched by;
 * - `upstream_round_trips`: one trip to a provider, by the SHA-256 of its `state`, consumed once;
 * - `upstream_pending`: an identity proved at a provider that no account holds yet, while its person
 *   picks a username or proves an account of theirs to link it to;
 * - `pending_sign_ins.first_factor`: what the first step of a two-step sign-in was, so that the
 *   second step's `amr` says it (`pwd`, or `fed` for a provider).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table upstream_providers (
    id integer generated always as identity primary key,
    name text not null constraint upstream_providers_name_key unique,
    kind text not null constraint upstream_providers_kind check (kind in ('oidc', 'github', 'google', 'apple')),
    display_name text not null,
    issuer text not null,
    api_url text,
    client_id text not null,
    client_secret_sealed text,
    apple_team_id text,
    apple_key_id text,
    apple_private_key_sealed text,
    scopes text not null,
    enabled boolean not null default true,
    trust_amr boolean not null default false,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`.execute(db);

  await sql`create table upstream_links (
    id bigint generated always as identity primary key,
    user_id integer not null references users (id),
    provider_id integer not null references upstream_providers (id) on delete cascade,
    subject text not null,
    issuer text not null,
    email text,
    label text,
    created_at timestamptz not null,
    last_used_at timestamptz,
    constraint upstream_links_subject_key unique (provider_id, issuer, subject)
  )`.execute(db);
  await sql`create index upstream_links_user_idx on upstream_links (user_id)`.execute(db);

  await sql`create table upstream_round_trips (
    state_hash text primary key,
    provider_id integer not null references upstream_providers (id) on delete cascade,
    purpose text not null constraint upstream_round_trips_purpose check (purpose in ('sign_in', 'link', 'reauth')),
    user_id integer references users (id),
    request_id text,
    return_to text,
    created_at timestamptz not null,
    expires_at timestamptz not null
  )`.execute(db);
  await sql`create index upstream_round_trips_expiry_idx on upstream_round_trips (expires_at)`.execute(db);

  await sql`create table upstream_pending (
    token_hash text primary key,
    provider_id integer not null references upstream_providers (id) on delete cascade,
    subject text not null,
    issuer text not null,
    email text,
    email_verified boolean not null,
    label text,
    suggested_username text,
    amr jsonb not null default '[]',
    request_id text,
    return_to text,
    created_at timestamptz not null,
    expires_at timestamptz not null
  )`.execute(db);
  await sql`create index upstream_pending_expiry_idx on upstream_pending (expires_at)`.execute(db);

  await sql`alter table pending_sign_ins add column first_factor text not null default 'pwd'
    constraint pending_sign_ins_first_factor check (first_factor in ('pwd', 'fed'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table pending_sign_ins drop column first_factor`.execute(db);
  await sql`drop table upstream_pending`.execute(db);
  await sql`drop table upstream_round_trips`.execute(db);
  await sql`drop table upstream_links`.execute(db);
  await sql`drop table upstream_providers`.execute(db);
}
