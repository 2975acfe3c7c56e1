import { type Kysely, sql } from 'kysely';

/**
 * The outbox of e-mail: a message is inserted in the transaction of what it
 * announces, so it is committed with the token it carries or not at all, and a worker on every
 * instance sends it later. A claim (`claim_id`, `claimed_until`) is a lease: a message whose
 * instance died is due again once it ends. `purge_after` is set when a message is sent or given up
 * on, and the housekeeping purge deletes it from then on.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mail_outbox')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    // What the message is about (`email_verification`, `password_reset`, `test`…), for the operator.
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('recipient', 'text', (col) => col.notNull())
    // The Content-Language of the message: `en` or `ru`.
    .addColumn('locale', 'text', (col) => col.notNull())
    .addColumn('subject', 'text', (col) => col.notNull())
    .addColumn('text_body', 'text', (col) => col.notNull())
    .addColumn('html_body', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    // Sends started (claims), whatever came of them.
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (col) => col.notNull())
    .addColumn('claim_id', 'text')
    .addColumn('claimed_until', 'timestamptz')
    .addColumn('sent_at', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    // The last SMTP error, cut short; never a body, link or credential.
    .addColumn('last_error', 'text')
    .addColumn('purge_after', 'timestamptz')
    .execute();
  // The worker's query: messages still to send, by when they are due.
  await sql`
    create index mail_outbox_due_idx on mail_outbox (next_attempt_at)
    where sent_at is null and failed_at is null`.execute(db);
  await sql`
    create index mail_outbox_purge_after_idx on mail_outbox (purge_after)
    where purge_after is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mail_outbox').execute();
}
