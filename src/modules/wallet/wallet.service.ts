import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { IdempotencyConflict, InsufficientFunds, InvalidRequest, NotFound } from '../../lib/errors.js';
import { isCheckViolation, parseInput } from '../../lib/validation.js';
import { findUserByUsername } from '../accounts/accounts.repository.js';
import {
  chargeWallet,
  countWallets,
  creditWallet,
  debitWallet,
  findBalance,
  findLedgerMismatches,
  listClientEntries,
  type PresentedEntry,
} from './wallet.repository.js';
import {
  amountSchema,
  type ChargeBody,
  CURRENCY,
  descriptionSchema,
  type TransactionPayload,
  toCoins,
  toMinorUnits,
} from './wallet.schemas.js';

/** How long a charge's idempotency key is kept: a retry within this time never charges twice. */
export const IDEMPOTENCY_KEY_LIFETIME_MS = 24 * 3600 * 1000;

/** The client charging and the user charged, both from the access token (never from the body). */
export interface WalletActor {
  userId: number;
  clientPk: number;
  /** The client's public `client_id`, and the caller's IP, for the audit log. */
  clientId: string;
  ip: string;
}

/** `tx_` and 128 bits of CSPRNG output: transaction ids reveal neither order nor volume. */
function newTransactionId(): string {
  return `tx_${randomBytes(16).toString('base64url')}`;
}

export function presentTransaction(entry: PresentedEntry): TransactionPayload {
  // A debit is an operator's correction: a client's list reads only its own charges (listClientEntries).
  if (entry.type === 'debit') throw new Error('an operator debit is not a transaction a client sees');
  return {
    id: entry.publicId,
    type: entry.type,
    amount: toCoins(entry.amount),
    currency: CURRENCY,
    description: entry.description,
    status: 'completed',
    balance_after: toCoins(entry.balanceAfter),
    idempotency_key: entry.idempotencyKey,
    created_at: entry.createdAt.toISOString(),
  };
}

export async function getBalance(
  db: Kysely<Database>,
  userId: number,
): Promise<{ ok: true; balance: number; currency: typeof CURRENCY }> {
  return { ok: true, balance: toCoins(await findBalance(db, userId)), currency: CURRENCY };
}

export interface ChargeOutcome {
  /** true when an earlier request with this key made the charge and this one only replays it. */
  replayed: boolean;
  body: { ok: true; transaction: TransactionPayload; balance: number };
}

/**
 * Charges the token's user once per idempotency key, in one statement. The same
 * key with the same amount, currency and description replays the recorded charge (with the balance
 * right after it); a refused charge leaves the key free for a retry.
 * @throws IdempotencyConflict when the key was used with a different request.
 * @throws InsufficientFunds when the balance is lower than the amount.
 */
export async function charge(
  db: Kysely<Database>,
  ctx: Context,
  actor: WalletActor,
  request: ChargeBody,
): Promise<ChargeOutcome> {
  const amount = toMinorUnits(request.amount) as number;
  // What makes two requests "the same": the amount as stored (so 1.5 and 1.50 agree), the currency
  // and the description. Fields the contract ignores are not part of it.
  const requestHash = createHash('sha256')
    .update(JSON.stringify([amount, request.currency, request.description]))
    .digest('base64url');
  const now = ctx.clock.now();
  const result = await chargeWallet(db, {
    clientPk: actor.clientPk,
    userId: actor.userId,
    key: request.idempotency_key,
    requestHash,
    publicId: newTransactionId(),
    amount,
    description: request.description,
    now,
    keyExpiresAt: new Date(now.getTime() + IDEMPOTENCY_KEY_LIFETIME_MS),
    actor: `client:${actor.clientId}`,
    ip: actor.ip,
  });
  switch (result.outcome) {
    case 'conflict':
      throw new IdempotencyConflict();
    case 'insufficient_funds':
      throw new InsufficientFunds();
    default:
      return { replayed: result.outcome === 'replayed', body: chargeBody(result.entry) };
  }
}

function chargeBody(entry: PresentedEntry): ChargeOutcome['body'] {
  return { ok: true, transaction: presentTransaction(entry), balance: toCoins(entry.balanceAfter) };
}

/** Opaque to clients: the id below which the next page starts. */
function encodeCursor(id: number): string {
  return Buffer.from(`t:${id}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): number {
  const match = /^t:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match?.[1]) throw new InvalidRequest('cursor is not one this API returned; start again without it.');
  return Number(match[1]);
}

/** The charges this client made to the token's user, newest first, a page at a time. */
export async function listTransactions(
  db: Kysely<Database>,
  actor: WalletActor,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ ok: true; transactions: TransactionPayload[]; next_cursor: string | null }> {
  const beforeId = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const rows = await listClientEntries(db, {
    userId: actor.userId,
    clientPk: actor.clientPk,
    beforeId,
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    ok: true,
    transactions: page.map(presentTransaction),
    next_cursor: rows.length > query.limit && last ? encodeCursor(last.id) : null,
  };
}

/**
 * An operator's top-up (`idp wallet credit`).
 * @throws InvalidRequest for an amount or description outside the rules of a charge.
 * @throws NotFound when there is no such user.
 */
export async function credit(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string; amount: unknown; description?: string | undefined },
): Promise<{ balance: number; transaction: TransactionPayload }> {
  const amount = toMinorUnits(parseInput(amountSchema, input.amount)) as number;
  const description = parseInput(descriptionSchema, input.description ?? 'Top-up');
  const user = await findUserByUsername(db, input.username);
  if (!user) throw new NotFound(`no user named ${input.username}`);
  try {
    const entry = await creditWallet(db, {
      publicId: newTransactionId(),
      userId: user.id,
      amount,
      description,
      now: ctx.clock.now(),
    });
    return { balance: toCoins(entry.balanceAfter), transaction: presentTransaction(entry) };
  } catch (error) {
    if (isCheckViolation(error)) {
      throw new InvalidRequest('This credit would take the balance past the largest one a wallet can hold.');
    }
    throw error;
  }
}

/** An operator's debit as the console shows it (in coins). */
export interface DebitView {
  id: string;
  type: 'debit';
  amount: number;
  description: string;
  balance_after: number;
  created_at: string;
}

/**
 * An operator's debit (the console), with the reason as the ledger entry's description; the
 * amount and description follow the rules of a charge. Nothing is taken unless the balance covers it.
 * @throws InvalidRequest for a bad amount or description; InsufficientFunds; NotFound for no such user.
 */
export async function debit(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string; amount: unknown; description: string },
): Promise<{ balance: number; transaction: DebitView }> {
  const amount = toMinorUnits(parseInput(amountSchema, input.amount)) as number;
  const description = parseInput(descriptionSchema, input.description);
  const user = await findUserByUsername(db, input.username);
  if (!user) throw new NotFound(`no user named ${input.username}`);
  const entry = await debitWallet(db, {
    publicId: newTransactionId(),
    userId: user.id,
    amount,
    description,
    now: ctx.clock.now(),
  });
  if (!entry) throw new InsufficientFunds();
  return {
    balance: toCoins(entry.balanceAfter),
    transaction: {
      id: entry.publicId,
      type: 'debit',
      amount: toCoins(entry.amount),
      description: entry.description,
      balance_after: toCoins(entry.balanceAfter),
      created_at: entry.createdAt.toISOString(),
    },
  };
}

/** What `idp wallet verify` prints (in coins). */
export interface LedgerCheck {
  ok: boolean;
  wallets_checked: number;
  mismatches: Array<{
    user_id: number;
    balance: number | null;
    ledger_sum: number;
    last_balance_after: number | null;
  }>;
}

/** The invariant of the books (`idp wallet verify`): every balance equals the sum of its entries. */
export async function verifyLedger(db: Kysely<Database>): Promise<LedgerCheck> {
  const [mismatches, walletsChecked] = await Promise.all([findLedgerMismatches(db), countWallets(db)]);
  return {
    ok: mismatches.length === 0,
    wallets_checked: walletsChecked,
    mismatches: mismatches.map((row) => ({
      user_id: row.userId,
      balance: row.balance === null ? null : toCoins(row.balance),
      ledger_sum: toCoins(row.ledgerSum),
      last_balance_after: row.lastBalanceAfter === null ? null : toCoins(row.lastBalanceAfter),
    })),
  };
}
