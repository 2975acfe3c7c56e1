import { type Kysely, sql } from 'kysely';

/**
 * Password reset links (`/password/reset?token=pr_…`, 30 minutes, single use, only
 * the newest one of a user works). Only the SHA-256 of the token is stored. `email` is the address
 * the link was sent to: a reset marks the user's address verified only while it is still that one.
 * The index on lower(users.email) serves `/password/forgot`, which finds accounts by address.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('password_resets')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();
  await sql`create index password_resets_user_idx on password_resets (user_id)`.execute(db);
  await sql`create index users_lower_email_idx on users (lower(email)) where email is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists users_lower_email_idx`.execute(db);
  await db.schema.dropTable('password_resets').execute();
}
