import { type Kysely, sql } from 'kysely';

/**
 * The operators' console.
 *
 * Its user search by e-mail address, beside the username and display-name indexes of migrations
 * 0004 and 0005: exact addresses and prefixes are a range of a `collate "C"` index (in code point
 * order, so the nearest match comes first and a common prefix reads only the rows a page shows);
 * substrings use a GIN trigram index (pg_trgm, which PostgreSQL and PGlite both ship). Both are
 * partial: rows without an address are never searched by it.
 *
 * An operator's debit of a wallet (a correction, with its reason as the description): a third kind
 * of ledger entry, `debit`, which like a credit has neither a client nor an idempotency key (the
 * `wallet_transactions_charge_has_client` check already holds for it) and which the books count
 * against the balance as they count a charge.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index users_email_prefix_idx on users ((lower(email) collate "C"))
    where email is not null`.execute(db);
  await sql`create index users_email_trgm_idx on users using gin (lower(email) gin_trgm_ops)
    where email is not null`.execute(db);
  await sql`alter table wallet_transactions
    drop constraint wallet_transactions_type_check,
    add constraint wallet_transactions_type_check check (type in ('credit', 'charge', 'debit'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table wallet_transactions
    drop constraint wallet_transactions_type_check,
    add constraint wallet_transactions_type_check check (type in ('credit', 'charge'))`.execute(db);
  await sql`drop index users_email_trgm_idx`.execute(db);
  await sql`drop index users_email_prefix_idx`.execute(db);
}
