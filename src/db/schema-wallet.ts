import type { Generated } from 'kysely';
import type { Timestamp } from './column-types.js';

/* The wallet's tables (migrations/0007_wallet and later); part of schema.ts's Database. */

export interface WalletsTable {
  user_id: number;
  /** Minor units (1 coin = 100); the database keeps it within 0 … 2^53 − 1. */
  balance: number;
  updated_at: Timestamp;
}

/** The append-only ledger: rows are only ever inserted (a trigger refuses updates and deletes). */
export interface WalletTransactionsTable {
  id: Generated<number>;
  /** `tx_…`, the id clients see. */
  public_id: string;
  user_id: number;
  /** The client that charged; null for an operator's credit or debit (`debit`: migrations/0034). */
  client_pk: number | null;
  type: 'credit' | 'charge' | 'debit';
  /** Minor units, always positive; `type` says which way it moved. */
  amount: number;
  balance_after: number;
  description: string;
  idempotency_key: string | null;
  created_at: Timestamp;
}

export interface WalletIdempotencyKeysTable {
  client_pk: number;
  user_id: number;
  idempotency_key: string;
  /** SHA-256 of the charge's amount, currency and description. */
  request_hash: string;
  transaction_public_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}
