import { type Kysely, sql } from 'kysely';

/**
 * Username prefixes in code point order: the search takes exact and prefix matches from a range of
 * this index, in index order, so a common prefix with thousands of matches reads only the first few.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index users_username_prefix_idx on users ((lower(username) collate "C"))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index users_username_prefix_idx`.execute(db);
}
