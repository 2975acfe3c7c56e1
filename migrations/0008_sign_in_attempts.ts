import type { Kysely } from 'kysely';

/**
 * Password checks per account, counted in the database in one statement per attempt, so parallel
 * attempts (on one instance or several) cannot slip past the limit: every attempt takes its slot
 * before its password is checked. A successful sign-in deletes the row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sign_in_attempts')
    .addColumn('user_id', 'bigint', (col) => col.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('attempts', 'integer', (col) => col.notNull())
    .addColumn('window_started_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('sign_in_attempts_window_idx')
    .on('sign_in_attempts')
    .column('window_started_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sign_in_attempts').execute();
}
