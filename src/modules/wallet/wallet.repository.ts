import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Database, WalletTransactionsTable } from '../../db/schema.js';

export type LedgerEntry = Selectable<WalletTransactionsTable>;

/** The user's balance in minor units; 0 when they have no wallet yet. */
export async function findBalance(db: Kysely<Database>, userId: number): Promise<number> {
  const row = await db
    .selectFrom('wallets')
    .select('balance')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.balance ?? 0;
}

/** Whether the client (by database id) holds the wallet right and is enabled, as of now. */
export async function clientHoldsWalletRight(db: Kysely<Database>, clientPk: number): Promise<boolean> {
  const row = await db
    .selectFrom('clients')
    .select('id')
    .where('id', '=', clientPk)
    .where('wallet', '=', true)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

export interface KeyClaim {
  clientPk: number;
  userId: number;
  key: string;
  requestHash: string;
  transactionPublicId: string;
  now: Date;
  expiresAt: Date;
}

/**
 * Claims an idempotency key for a new charge: inserts it, or takes over a row whose time is up.
 * Returns false when a live row holds the key. A concurrent transaction holding the same
 * uncommitted key makes this statement wait on the primary key until it commits (false) or rolls
 * back (true).
 */
export async function claimIdempotencyKey(trx: Transaction<Database>, claim: KeyClaim): Promise<boolean> {
  const row = await trx
    .insertInto('wallet_idempotency_keys')
    .values({
      client_pk: claim.clientPk,
      user_id: claim.userId,
      idempotency_key: claim.key,
      request_hash: claim.requestHash,
      transaction_public_id: claim.transactionPublicId,
      created_at: claim.now,
      expires_at: claim.expiresAt,
    })
    .onConflict((conflict) =>
      conflict
        .columns(['client_pk', 'user_id', 'idempotency_key'])
        .doUpdateSet((eb) => ({
          request_hash: eb.ref('excluded.request_hash'),
          transaction_public_id: eb.ref('excluded.transaction_public_id'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where('wallet_idempotency_keys.expires_at', '<=', claim.now),
    )
    .returning('transaction_public_id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The live key row and the charge it recorded. Run as its own statement after a failed claim, so
 * that (in READ COMMITTED) it sees the row a concurrent transaction has just committed.
 */
export async function findKeyedCharge(
  trx: Transaction<Database>,
  key: { clientPk: number; userId: number; key: string },
): Promise<{ requestHash: string; entry: LedgerEntry } | undefined> {
  const row = await trx
    .selectFrom('wallet_idempotency_keys as k')
    .innerJoin('wallet_transactions as t', 't.public_id', 'k.transaction_public_id')
    .selectAll('t')
    .select('k.request_hash')
    .where('k.client_pk', '=', key.clientPk)
    .where('k.user_id', '=', key.userId)
    .where('k.idempotency_key', '=', key.key)
    .executeTakeFirst();
  if (!row) return undefined;
  const { request_hash, ...entry } = row;
  return { requestHash: request_hash, entry };
}

/**
 * Debits the wallet and appends the charge to the ledger in one statement. The `balance >= amount`
 * condition takes the row lock first, so concurrent charges of one wallet queue on it and each sees
 * the balance the previous one left. Undefined when the balance is too low (or there is no wallet).
 */
export async function debitWallet(
  trx: Transaction<Database>,
  charge: {
    publicId: string;
    userId: number;
    clientPk: number;
    amount: number;
    description: string;
    key: string;
    now: Date;
  },
): Promise<LedgerEntry | undefined> {
  const result = await sql<LedgerEntry>`
    with debited as (
      update wallets set balance = balance - ${charge.amount}, updated_at = ${charge.now}
      where user_id = ${charge.userId} and balance >= ${charge.amount}
      returning balance
    )
    insert into wallet_transactions
      (public_id, user_id, client_pk, type, amount, balance_after, description, idempotency_key, created_at)
    select ${charge.publicId}, ${charge.userId}, ${charge.clientPk}, 'charge', ${charge.amount}, balance,
      ${charge.description}, ${charge.key}, ${charge.now}
    from debited
    returning *`.execute(trx);
  return result.rows[0];
}

/** Credits the wallet (creating it on first use) and appends the credit to the ledger, in one statement. */
export async function creditWallet(
  db: Kysely<Database>,
  credit: { publicId: string; userId: number; amount: number; description: string; now: Date },
): Promise<LedgerEntry> {
  const result = await sql<LedgerEntry>`
    with credited as (
      insert into wallets (user_id, balance, updated_at)
      values (${credit.userId}, ${credit.amount}, ${credit.now})
      on conflict (user_id) do update
        set balance = wallets.balance + excluded.balance, updated_at = excluded.updated_at
      returning balance
    )
    insert into wallet_transactions
      (public_id, user_id, client_pk, type, amount, balance_after, description, idempotency_key, created_at)
    select ${credit.publicId}, ${credit.userId}, null, 'credit', ${credit.amount}, balance,
      ${credit.description}, null, ${credit.now}
    from credited
    returning *`.execute(db);
  const entry = result.rows[0];
  if (!entry) throw new Error('the credit statement returned no row');
  return entry;
}

/** The charges `clientPk` made to the user, newest first, below `beforeId` when given. */
export async function listClientEntries(
  db: Kysely<Database>,
  query: { userId: number; clientPk: number; beforeId: number | undefined; limit: number },
): Promise<LedgerEntry[]> {
  let select = db
    .selectFrom('wallet_transactions')
    .selectAll()
    .where('user_id', '=', query.userId)
    .where('client_pk', '=', query.clientPk);
  if (query.beforeId !== undefined) select = select.where('id', '<', query.beforeId);
  return select.orderBy('id', 'desc').limit(query.limit).execute();
}

export interface LedgerMismatch {
  user_id: number;
  /** The stored balance (null: ledger entries but no wallet row). */
  balance: number | null;
  /** Credits minus charges over the ledger. */
  ledger_sum: number;
  /** `balance_after` of the user's latest entry (null: a wallet without entries). */
  last_balance_after: number | null;
}

/**
 * Every user whose stored balance differs from the sum of their ledger entries, or from the
 * balance their latest entry recorded; an empty list when the books balance.
 */
export async function findLedgerMismatches(db: Kysely<Database>): Promise<LedgerMismatch[]> {
  const result = await sql<LedgerMismatch>`
    with sums as (
      select user_id,
        sum(case type when 'credit' then amount else -amount end)::bigint as ledger_sum,
        max(id) as last_id
      from wallet_transactions
      group by user_id
    )
    select coalesce(w.user_id, s.user_id) as user_id, w.balance,
      coalesce(s.ledger_sum, 0)::bigint as ledger_sum, t.balance_after as last_balance_after
    from wallets w
    full join sums s on s.user_id = w.user_id
    left join wallet_transactions t on t.id = s.last_id
    where w.balance is distinct from coalesce(s.ledger_sum, 0)
      or w.balance is distinct from t.balance_after
    order by 1`.execute(db);
  return result.rows;
}

/** How many wallets there are (the number the invariant check covered). */
export async function countWallets(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('wallets')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
