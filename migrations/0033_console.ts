import { type Kysely, sql } from 'kysely';

/**
 * The operators' console. `operators`: the accounts given a console role by `idp admins grant`
 * (owner, support, auditor); an account loses it with `revoke` or when deleted. `console_sessions`:
 * entries into the console, each opened with a second factor on top of an account session and
 * shorter than it; only the SHA-256 hash of the cookie's value is kept. `proved_at` is the last
 * second-factor proof, which destructive actions need recent.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table operators (
      user_id integer primary key references users (id) on delete cascade,
      role text not null check (role in ('owner', 'support', 'auditor')),
      granted_at timestamptz not null,
      granted_by text not null
    )`.execute(db);
  await sql`
    create table console_sessions (
      id_hash text primary key,
      user_id integer not null references users (id) on delete cascade,
      account_session_hash text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      proved_at timestamptz not null,
      method text not null,
      ip text
    )`.execute(db);
  await sql`create index console_sessions_user on console_sessions (user_id)`.execute(db);
  await sql`create index console_sessions_expiry on console_sessions (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table console_sessions`.execute(db);
  await sql`drop table operators`.execute(db);
}
