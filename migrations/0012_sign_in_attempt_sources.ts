import { type Kysely, sql } from 'kysely';

/**
 * Failed password checks are counted per account and per source (OWASP, "Slow Down Online Guessing
 * Attacks with Device Cookies"): a browser or app device that signed in to the account before has a
 * budget of its own (`device:…`, `mobile:…`), and every other attempt shares the account's
 * untrusted budget (`''`). A stranger who uses that one up locks out strangers, not the owner.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('sign_in_attempts')
    .addColumn('source', 'text', (col) => col.notNull().defaultTo(''))
    .execute();
  await sql`alter table sign_in_attempts drop constraint sign_in_attempts_pkey`.execute(db);
  await sql`alter table sign_in_attempts add primary key (user_id, source)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from sign_in_attempts where source <> ''`.execute(db);
  await sql`alter table sign_in_attempts drop constraint sign_in_attempts_pkey`.execute(db);
  await sql`alter table sign_in_attempts add primary key (user_id)`.execute(db);
  await db.schema.alterTable('sign_in_attempts').dropColumn('source').execute();
}
