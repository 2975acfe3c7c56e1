import { type Kysely, sql } from 'kysely';

/**
 * When the person at a browser session last proved again who they are (the password, a TOTP or
 * recovery code) without signing in anew: "sudo mode" for the pages that change how the account
 * signs in (second factors, passkeys, recovery codes, the e-mail address, export, deletion).
 * Null until the first such proof; a full sign-in counts through `auth_time`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table browser_sessions add column reauthenticated_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('browser_sessions').dropColumn('reauthenticated_at').execute();
}
