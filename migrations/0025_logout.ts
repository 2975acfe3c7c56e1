import { type Kysely, sql } from 'kysely';

/**
 * Where a client may send the browser back after RP-initiated logout (OIDC RP-Initiated Logout 1.0
 * §3.1, `post_logout_redirect_uris`). Exact strings, like `redirect_uris`; none by
 * default, so an existing client gets the signed-out page until it registers one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients add column post_logout_redirect_uris text[] not null default '{}'
    constraint clients_post_logout_redirect_uris_count check (cardinality(post_logout_redirect_uris) <= 20)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('post_logout_redirect_uris').execute();
}
