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
  // Shared by every append-only table (the audit log of migrations/0009 too).
  await sql`
    create function refuse_change_of_append_only() returns trigger language plpgsql as $$
    begin
      raise exception '% is append-only: % is not allowed', tg_table_name, tg_op
        using errcode = 'restrict_violation';
    end
    $$`.execute(db);
  await sql`
    create trigger wallet_transactions_append_only
    before update or delete on wallet_transactions
    for each row execute function refuse_change_of_append_only()`.execute(db);

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
  await createChargeFunction(db);
  await db.schema
    .createIndex('wallet_idempotency_keys_expires_idx')
    .on('wallet_idempotency_keys')
    .column('expires_at')
    .execute();
}

/**
 * `wallet_charge(...)`: a whole charge in one statement, so one round trip, atomic on its own, with
 * its plans cached by the server.
 *
 * 1. Claim the idempotency key: insert it, or take over a row whose time is up. A concurrent
 *    transaction holding the same uncommitted key makes this wait on the primary key until it
 *    commits (the key is then taken) or rolls back (the claim succeeds).
 * 2. A taken key: answer from the committed row (each statement of a function sees the rows
 *    committed before it began): `replayed` with the recorded charge when the request hash is the
 *    same, else `conflict`.
 * 3. Debit: `balance >= amount` under the wallet's row lock, so concurrent charges of one wallet
 *    queue and each sees the balance the previous one left. Too low (or no wallet): the claim is
 *    deleted again and the answer is `insufficient_funds`, so a retry after a top-up can use the key.
 * 4. Append the ledger entry with the balance after it, and the audit event: `charged`.
 */
async function createChargeFunction(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function wallet_charge(
      p_client_pk bigint, p_user_id bigint, p_key text, p_request_hash text, p_public_id text,
      p_amount bigint, p_description text, p_now timestamptz, p_key_expires_at timestamptz,
      p_actor text, p_ip text
    ) returns table (
      outcome text, public_id text, amount bigint, balance_after bigint, description text,
      idempotency_key text, created_at timestamptz
    ) language plpgsql volatile as $$
    #variable_conflict use_column
    declare
      v_claimed boolean;
      v_balance bigint;
    begin
      insert into wallet_idempotency_keys as k
        (client_pk, user_id, idempotency_key, request_hash, transaction_public_id, created_at, expires_at)
      values (p_client_pk, p_user_id, p_key, p_request_hash, p_public_id, p_now, p_key_expires_at)
      on conflict (client_pk, user_id, idempotency_key) do update
        set request_hash = excluded.request_hash,
          transaction_public_id = excluded.transaction_public_id,
          created_at = excluded.created_at,
          expires_at = excluded.expires_at
        where k.expires_at <= p_now
      returning true into v_claimed;

      if v_claimed is null then
        return query
          select case when k.request_hash = p_request_hash then 'replayed' else 'conflict' end,
            t.public_id, t.amount, t.balance_after, t.description, t.idempotency_key, t.created_at
          from wallet_idempotency_keys k
          join wallet_transactions t on t.public_id = k.transaction_public_id
          where k.client_pk = p_client_pk and k.user_id = p_user_id and k.idempotency_key = p_key;
        return;
      end if;

      update wallets set balance = balance - p_amount, updated_at = p_now
      where user_id = p_user_id and balance >= p_amount
      returning balance into v_balance;
      if v_balance is null then
        delete from wallet_idempotency_keys k
        where k.client_pk = p_client_pk and k.user_id = p_user_id and k.idempotency_key = p_key;
        return query select 'insufficient_funds', null::text, null::bigint, null::bigint, null::text,
          null::text, null::timestamptz;
        return;
      end if;

      insert into wallet_transactions
        (public_id, user_id, client_pk, type, amount, balance_after, description, idempotency_key, created_at)
      values (p_public_id, p_user_id, p_client_pk, 'charge', p_amount, v_balance, p_description, p_key, p_now);
      -- The audit log of migrations/0009_audit, in the same statement as the charge.
      insert into audit_events (at, actor, action, subject, ip, details)
      values (p_now, p_actor, 'wallet_charged', 'user:' || p_user_id, p_ip,
        jsonb_build_object('transaction', p_public_id, 'amount', p_amount / 100.0));
      return query select 'charged', p_public_id, p_amount, v_balance, p_description, p_key, p_now;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function wallet_charge`.execute(db);
  await db.schema.dropTable('wallet_idempotency_keys').execute();
  await db.schema.dropTable('wallet_transactions').execute();
  await sql`drop function refuse_change_of_append_only()`.execute(db);
  await db.schema.dropTable('wallets').execute();
}
