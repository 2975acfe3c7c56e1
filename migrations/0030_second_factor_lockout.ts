import { type Kysely, sql } from 'kysely';

/**
 * The second factor at every door (docs/mobile.md, docs/pages.md "Two-step sign-in").
 * `mobile_pending_sign_ins`: the password step of a mobile sign-in waiting for its second factor
 * (5 minutes, single use), bound to the app's client, the device id and the device's public key;
 * only the SHA-256 of the `mfa_…` token is kept. `second_factor_failures`: the second-step checks
 * of an account since the last one that passed, across every sign-in window; past
 * SECOND_FACTOR_MAX_FAILURES only a browser or app device that signed in before may try a code,
 * until a code passes there, a password reset or an operator clears the row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mobile_pending_sign_ins')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('device_id', 'text', (col) => col.notNull())
    .addColumn('public_key', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('consumed_at', 'timestamptz')
    .execute();
  await sql`create index mobile_pending_sign_ins_user_idx on mobile_pending_sign_ins (user_id)`.execute(db);
  await sql`create index mobile_pending_sign_ins_expires_idx on mobile_pending_sign_ins (expires_at)`.execute(
    db,
  );
  await db.schema
    .createTable('second_factor_failures')
    .addColumn('user_id', 'bigint', (col) => col.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('failures', 'integer', (col) => col.notNull())
    .addColumn('last_checked_at', 'timestamptz', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('second_factor_failures').execute();
  await db.schema.dropTable('mobile_pending_sign_ins').execute();
}
