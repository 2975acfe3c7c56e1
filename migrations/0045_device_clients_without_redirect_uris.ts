import { type Kysely, sql } from 'kysely';

/**
 * A client that may use the device grant (RFC 8628, migrations/0041) may have no redirect URI: its
 * devices never receive a redirect (src/modules/clients/clients.schemas.ts, redirectUriCountProblem).
 * At most 20 still; at least one for every other client.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients
    drop constraint clients_redirect_uris_check,
    add constraint clients_redirect_uris_count
      check (cardinality(redirect_uris) <= 20 and (cardinality(redirect_uris) >= 1 or device_grant))`.execute(
    db,
  );
}

/** Refused while a client has no redirect URI: it would have to be given one first. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients
    drop constraint clients_redirect_uris_count,
    add constraint clients_redirect_uris_check check (cardinality(redirect_uris) between 1 and 20)`.execute(
    db,
  );
}
