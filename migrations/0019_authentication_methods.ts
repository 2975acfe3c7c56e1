import { type Kysely, sql } from 'kysely';

/**
 * How a browser signed in (RFC 8176 `amr` values): kept with the session, and with
 * each code issued from it, so the id_token says which factors were used (and `acr` is `mfa` when a
 * second one was). Sessions and codes from before this migration were password sign-ins.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table browser_sessions add column amr text[] not null default '{pwd}'`.execute(db);
  await sql`alter table authorization_codes add column amr text[] not null default '{pwd}'`.execute(db);
  // An authorize request with `acr_values=mfa` waits for a second factor while the user signs in.
  await sql`alter table authorization_requests add column require_mfa boolean not null default false`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('authorization_requests').dropColumn('require_mfa').execute();
  await db.schema.alterTable('authorization_codes').dropColumn('amr').execute();
  await db.schema.alterTable('browser_sessions').dropColumn('amr').execute();
}
