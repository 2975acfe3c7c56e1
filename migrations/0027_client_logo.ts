import { type Kysely, sql } from 'kysely';

/**
 * A client's logo (`logo_uri`, OIDC Dynamic Client Registration §2 / RFC 7591 §2): shown on the
 * sign-in and consent pages of its requests. https, or http on a loopback host for development;
 * none by default.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients add column logo_uri text
    constraint clients_logo_uri_length check (char_length(logo_uri) <= 2048)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('logo_uri').execute();
}
