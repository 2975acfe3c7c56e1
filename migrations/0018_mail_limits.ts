import { type Kysely, sql } from 'kysely';

/**
 * The account a message is about (at most 5 messages of each kind per account
 * per hour). Null for messages about no account (`idp mail test`). The index serves the count of an
 * account's recent messages of one kind, and the deletion of an account's messages with the account.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('mail_outbox')
    .addColumn('user_id', 'bigint', (col) => col.references('users.id').onDelete('cascade'))
    .execute();
  await sql`
    create index mail_outbox_user_kind_idx on mail_outbox (user_id, kind, created_at)
    where user_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mail_outbox').dropColumn('user_id').execute();
}
