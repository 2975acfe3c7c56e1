import { type Kysely, sql } from 'kysely';

/**
 * The device authorization grant (RFC 8628):
 * - `clients.device_grant`: the client may use it (`idp clients create|update --device-grant`);
 * - `device_codes`: one device's request, by the SHA-256 of its `device_code` and of its normalised
 *   `user_code`; pending until its person allows or denies it at `/device`, then redeemed once.
 *   `interval` grows by 5 seconds each time the device polls too fast (RFC 8628 §3.5 slow_down).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients add column device_grant boolean not null default false`.execute(db);
  await sql`create table device_codes (
    id bigint generated always as identity primary key,
    device_code_hash text not null constraint device_codes_device_code_hash_key unique,
    user_code_hash text not null constraint device_codes_user_code_hash_key unique,
    client_pk integer not null references clients (id),
    scopes text[] not null,
    -- What asked, as the device said it (its User-Agent), shown on the confirmation page.
    device_label text,
    status text not null default 'pending'
      constraint device_codes_status check (status in ('pending', 'allowed', 'denied')),
    user_id integer references users (id),
    auth_time timestamptz,
    amr text[],
    sid text,
    interval_seconds integer not null,
    last_polled_at timestamptz,
    created_at timestamptz not null,
    expires_at timestamptz not null,
    decided_at timestamptz,
    redeemed_at timestamptz
  )`.execute(db);
  await sql`create index device_codes_expiry_idx on device_codes (expires_at)`.execute(db);
  await sql`create index device_codes_user_idx on device_codes (user_id) where user_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table device_codes`.execute(db);
  await sql`alter table clients drop column device_grant`.execute(db);
}
