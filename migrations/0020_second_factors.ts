import { type Kysely, sql } from 'kysely';

/**
 * Second factors. `totp_credentials`: one TOTP key per user, stored sealed
 * (AES-256-GCM, src/lib/sealed-secret.ts), never plain; `confirmed_at` is null while enrolment waits
 * for a first code; `last_used_step` is the newest RFC 6238 time step accepted, so a code is
 * accepted once (§5.2). `recovery_codes`: only their SHA-256, each used once. `pending_sign_ins`:
 * the password step of a sign-in waiting for its second factor (5 minutes, single use), bound to
 * the browser by an HttpOnly cookie whose SHA-256 is `id_hash`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('totp_credentials')
    .addColumn('user_id', 'bigint', (col) => col.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret_sealed', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('confirmed_at', 'timestamptz')
    .addColumn('last_used_step', 'bigint')
    .execute();
  await db.schema
    .createTable('recovery_codes')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (col) => col.notNull().unique())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();
  await sql`create index recovery_codes_user_idx on recovery_codes (user_id)`.execute(db);
  await db.schema
    .createTable('pending_sign_ins')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('id_hash', 'text', (col) => col.notNull().unique())
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('consumed_at', 'timestamptz')
    .execute();
  await sql`create index pending_sign_ins_user_idx on pending_sign_ins (user_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('pending_sign_ins').execute();
  await db.schema.dropTable('recovery_codes').execute();
  await db.schema.dropTable('totp_credentials').execute();
}
