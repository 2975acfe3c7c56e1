import { type Kysely, sql } from 'kysely';

/**
 * A rotated client secret may stay valid for a while beside the new one (`idp clients
 * rotate-secret --overlap SECONDS`, the console's rotation), so that a site can deploy its new
 * secret without a window of failing token calls. Only the previous secret's SHA-256 hash is
 * kept, with the moment it stops being accepted; both are set together or not at all.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients
    add column previous_secret_hash text,
    add column previous_secret_expires_at timestamptz,
    add constraint clients_previous_secret_pair check (
      (previous_secret_hash is null) = (previous_secret_expires_at is null)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients
    drop constraint clients_previous_secret_pair,
    drop column previous_secret_expires_at,
    drop column previous_secret_hash`.execute(db);
}
