import { type Kysely, sql } from 'kysely';
import unhomoglyph from 'unhomoglyph';

/**
 * Usernames that only look alike are one username: each user gets the confusable skeleton of its
 * name (Unicode TS #39 §4, lower-cased; see src/lib/username-skeleton.ts), unique among users. The
 * key is computed here as that function did when this migration was written, so the migration stays
 * what it was. Existing users who already share a skeleton keep their names; the oldest holds the
 * skeleton and the others have none, so the index can be built.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('username_skeleton', 'text').execute();
  const users = await sql<{
    id: number;
    username: string;
  }>`select id, username from users order by id`.execute(db);
  const taken = new Set<string>();
  for (const user of users.rows) {
    const skeleton = unhomoglyph(user.username).toLowerCase();
    if (taken.has(skeleton)) continue;
    taken.add(skeleton);
    await sql`update users set username_skeleton = ${skeleton} where id = ${user.id}`.execute(db);
  }
  await sql`create unique index users_username_skeleton_key on users (username_skeleton)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('username_skeleton').execute();
}
