import { type Kysely, type Selectable, sql } from 'kysely';
import { prepared } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';
import type { WalletTransactionsTable } from '../../db/schema-wallet.js';

type LedgerRow = Selectable<WalletTransactionsTable>;

/** One entry of the append-only ledger; amounts in minor units. */
export interface LedgerEntry {
  id: number;
  /** `tx_…`, the id clients see. */
  publicId: string;
  userId: number;
  /** The client that charged; null for an operator's credit or debit. */
  clientPk: number | null;
  /** `debit`: an operator's correction from the console (migrations/0034), never a client's. */
  type: 'credit' | 'charge' | 'debit';
  amount: number;
  balanceAfter: number;
  description: string;
  idempotencyKey: string | null;
  createdAt: Date;
}

function toLedgerEntry(row: LedgerRow): LedgerEntry {
  return {
    id: row.id,
    publicId: row.public_id,
    userId: row.user_id,
    clientPk: row.client_pk,
    type: row.type,
    amount: row.amount,
    balanceAfter: row.balance_after,
    description: row.description,
    idempotencyKey: row.idempotency_key,
    createdAt: row.created_at,
  };
}

/** The user's balance in minor units; 0 when they have no wallet yet. */
export async function findBalance(db: Kysely<Database>, userId: number): Promise<number> {
  const row = await db
    .selectFrom('wallets')
    .select('balance')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.balance ?? 0;
}

export interface ChargeRequest {
  clientPk: number;
  userId: number;
  key: string;
  requestHash: string;
  /** The `tx_…` id the charge will have. */
  publicId: string;
  amount: number;
  description: string;
  now: Date;
  keyExpiresAt: Date;
  /** For the audit log: who charged (`client:<client_id>`) and from where. */
  actor: string;
  ip: string | null;
}

/** The fields of a ledger entry that the API shows (`wallet_charge` returns these of a charge). */
export type PresentedEntry = Pick<
  LedgerEntry,
  'publicId' | 'type' | 'amount' | 'balanceAfter' | 'description' | 'idempotencyKey' | 'createdAt'
>;

/** The columns `wallet_charge` returns for a charge it made or replays. */
type ChargeRow = Pick<
  LedgerRow,
  'public_id' | 'amount' | 'balance_after' | 'description' | 'idempotency_key' | 'created_at'
> & { outcome: ChargeOutcome['outcome'] };

export type ChargeOutcome =
  | { outcome: 'charged' | 'replayed'; entry: PresentedEntry }
  | { outcome: 'conflict' | 'insufficient_funds' };

/**
 * A whole charge in one statement: `wallet_charge` of migrations/0006_wallet claims the
 * idempotency key, debits the wallet and appends the ledger entry, or answers from the charge
 * already recorded under the key. One statement is one transaction: all of it happens or none.
 */
export async function chargeWallet(db: Kysely<Database>, charge: ChargeRequest): Promise<ChargeOutcome> {
  const result = await sql<ChargeRow>`${prepared}
    select * from wallet_charge(${charge.clientPk}, ${charge.userId}, ${charge.key}, ${charge.requestHash},
      ${charge.publicId}, ${charge.amount}, ${charge.description}, ${charge.now}, ${charge.keyExpiresAt},
      ${charge.actor}, ${charge.ip})`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error('wallet_charge returned no row');
  const outcome = row.outcome;
  return outcome === 'charged' || outcome === 'replayed'
    ? {
        outcome,
        entry: {
          publicId: row.public_id,
          type: 'charge',
          amount: row.amount,
          balanceAfter: row.balance_after,
          description: row.description,
          idempotencyKey: row.idempotency_key,
          createdAt: row.created_at,
        },
      }
    : { outcome };
}

/** Credits the wallet (creating it on first use) and appends the credit to the ledger, in one statement. */
export async function creditWallet(
  db: Kysely<Database>,
  credit: { publicId: string; userId: number; amount: number; description: string; now: Date },
): Promise<LedgerEntry> {
  const result = await sql<LedgerRow>`
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
  const row = result.rows[0];
  if (!row) throw new Error('the credit statement returned no row');
  return toLedgerEntry(row);
}

/**
 * An operator's debit: takes `amount` from the wallet and appends the entry, in one statement, only
 * while the balance covers it (the wallet's row lock orders it after any charge in progress).
 * Undefined when it does not, or when the user has no wallet: nothing is written then.
 */
export async function debitWallet(
  db: Kysely<Database>,
  debit: { publicId: string; userId: number; amount: number; description: string; now: Date },
): Promise<LedgerEntry | undefined> {
  const result = await sql<LedgerRow>`
    with debited as (
      update wallets set balance = balance - ${debit.amount}, updated_at = ${debit.now}
      where user_id = ${debit.userId} and balance >= ${debit.amount}
      returning balance
    )
    insert into wallet_transactions
      (public_id, user_id, client_pk, type, amount, balance_after, description, idempotency_key, created_at)
    select ${debit.publicId}, ${debit.userId}, null, 'debit', ${debit.amount}, balance,
      ${debit.description}, null, ${debit.now}
    from debited
    returning *`.execute(db);
  const row = result.rows[0];
  return row && toLedgerEntry(row);
}

/** The latest `limit` entries of a user's ledger, newest first (the console's user page). */
export async function listRecentEntriesOfUser(
  db: Kysely<Database>,
  userId: number,
  limit: number,
): Promise<LedgerEntry[]> {
  const rows = await db
    .selectFrom('wallet_transactions')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toLedgerEntry);
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
  const rows = await select.orderBy('id', 'desc').limit(query.limit).execute();
  return rows.map(toLedgerEntry);
}

export interface LedgerMismatch {
  userId: number;
  /** The stored balance (null: ledger entries but no wallet row). */
  balance: number | null;
  /** Credits minus charges over the ledger. */
  ledgerSum: number;
  /** `balance_after` of the user's latest entry (null: a wallet without entries). */
  lastBalanceAfter: number | null;
}

/**
 * Every user whose stored balance differs from the sum of their ledger entries, or from the
 * balance their latest entry recorded; an empty list when the books balance.
 */
export async function findLedgerMismatches(db: Kysely<Database>): Promise<LedgerMismatch[]> {
  const result = await sql<{
    user_id: number;
    balance: number | null;
    ledger_sum: number;
    last_balance_after: number | null;
  }>`
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
  return result.rows.map((row) => ({
    userId: row.user_id,
    balance: row.balance,
    ledgerSum: row.ledger_sum,
    lastBalanceAfter: row.last_balance_after,
  }));
}

/** How many wallets there are (the number the invariant check covered). */
export async function countWallets(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('wallets')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Every ledger entry of a user, oldest first (the data export). */
export async function listEntriesOfUser(db: Kysely<Database>, userId: number): Promise<LedgerEntry[]> {
  const rows = await db
    .selectFrom('wallet_transactions')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
  return rows.map(toLedgerEntry);
}
