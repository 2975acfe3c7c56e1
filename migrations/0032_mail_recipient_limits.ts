import { type Kysely, sql } from 'kysely';

/**
 * Mail limits per recipient address, not only per account: one row per message queued to an
 * address, by the SHA-256 of the address as mail.service `recipientKey` normalises it (trimmed,
 * lower-case, without a `+tag`), so that twelve accounts naming one address cannot send it twelve
 * messages of a kind. A row is dead an hour after its message (`expires_at`), when the housekeeping
 * purge may delete it; no address is stored in clear, and none outlives its hour.
 *
 * With it, `users.email_claim_withheld`: the account confirmed its address after another account
 * had confirmed the same one (case-insensitive). The confirmation stands (mail goes there), but the
 * `email_verified` claim released to sites stays false: the first account to confirm an address
 * owns its verified status (docs/integrating.md). Accounts that already share a confirmed address
 * keep it for the oldest of them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mail_recipient_sends')
    .addColumn('recipient_hash', 'text', (col) => col.notNull())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await sql`
    create index mail_recipient_sends_key_idx on mail_recipient_sends (recipient_hash, kind, created_at)`.execute(
    db,
  );
  await sql`create index mail_recipient_sends_expires_idx on mail_recipient_sends (expires_at)`.execute(db);

  await sql`alter table users add column email_claim_withheld boolean not null default false`.execute(db);
  await sql`
    update users set email_claim_withheld = true
    where email_verified and email is not null and exists (
      select 1 from users first
      where lower(first.email) = lower(users.email) and first.email_verified and first.id < users.id)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('email_claim_withheld').execute();
  await db.schema.dropTable('mail_recipient_sends').execute();
}
