import { type Kysely, sql } from 'kysely';

/**
 * The coin wallet: an append-only ledger in integer minor units (1 coin = 100), a per-user balance
 * kept in the same transaction as each entry, and the idempotency keys of charges.
 *
 * The database itself guards the money, so that a bug in the service cannot break it: the balance
 * can never go below zero (nor past 2^53 − 1, the last integer a JSON number holds exactly), every
 * entry moves a positive amount, and ledger entries can be neither updated nor deleted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('wallets')
    .addColumn('user_id', 'bigint', (col) => col.primaryKey().references('users.id').onDelete('restrict'))
    .addColumn('balance', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull())
    .addCheckConstraint('wallets_balance_in_range', sql`balance between 0 and 9007199254740991`)
    .execute();

  await db.schema
    .createTable('wallet_transactions')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('public_id', 'text', (col) => col.notNull().unique())
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('restrict'))
    // The client that charged; null for an operator's credit.
    .addColumn('client_pk', 'bigint', (col) => col.references('clients.id').onDelete('restrict'))
    .addColumn('type', 'text', (col) => col.notNull().check(sql`type in ('credit', 'charge')`))
    .addColumn('amount', 'bigint', (col) => col.notNull().check(sql`amount > 0`))
    .addColumn('balance_after', 'bigint', (col) => col.notNull().check(sql`balance_after >= 0`))
    .addColumn('description', 'text', (col) => col.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addCheckConstraint(
      'wallet_transactions_charge_has_client',
      sql`(type = 'charge') = (client_pk is not null and idempotency_key is not null)`,
    )
    .execute();
  // A client's history of one user, newest first (the transactions route and its cursor).
  await db.schema
    .createIndex('wallet_transactions_history_idx')
    .on('wallet_transactions')
    .columns(['user_id', 'client_pk', 'id desc'])
    .execute();
  await sql`
    create function wallet_transactions_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'wallet_transactions is append-only: % is not allowed', tg_op
        using errcode = 'restrict_violation';
    end
    $$`.execute(db);
  await sql`
    create trigger wallet_transactions_append_only
    before update or delete on wallet_transactions
    for each row execute function wallet_transactions_append_only()`.execute(db);

  // A charge's idempotency key, scoped per client and user. The row is written in the charge's own
  // transaction, so a concurrent request with the same key waits on its unique index until the
  // first commits (and then replays it) or rolls back (and then charges itself). Rows outlive
  // `expires_at` only until the housekeeping job deletes them; the ledger entry stays.
  await db.schema
    .createTable('wallet_idempotency_keys')
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('idempotency_key', 'text', (col) => col.notNull())
    // SHA-256 of the charge's meaningful fields, to tell a replay from a different request.
    .addColumn('request_hash', 'text', (col) => col.notNull())
    // The charge's `tx_…` id, chosen before the charge is written: the key row is inserted first, so
    // the reference is checked at commit.
    .addColumn('transaction_public_id', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addPrimaryKeyConstraint('wallet_idempotency_keys_pkey', ['client_pk', 'user_id', 'idempotency_key'])
    .addForeignKeyConstraint(
      'wallet_idempotency_keys_transaction_fkey',
      ['transaction_public_id'],
      'wallet_transactions',
      ['public_id'],
      (constraint) => constraint.onDelete('restrict').deferrable().initiallyDeferred(),
    )
    .execute();
  await db.schema
    .createIndex('wallet_idempotency_keys_expires_idx')
    .on('wallet_idempotency_keys')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('wallet_idempotency_keys').execute();
  await db.schema.dropTable('wallet_transactions').execute();
  await sql`drop function wallet_transactions_append_only()`.execute(db);
  await db.schema.dropTable('wallets').execute();
}
