import type { Generated } from 'kysely';
import type { Timestamp } from './column-types.js';

/* The second factor at every door (migrations/0030); part of schema.ts's Database. */

/** A mobile sign-in's password step waiting for its second factor (migrations/0030); only the mfa_ token's SHA-256 is kept. */
export interface MobilePendingSignInsTable {
  id: Generated<number>;
  token_hash: string;
  user_id: number;
  client_pk: number;
  device_id: string;
  /** The device key that signed the password step: the second step must be signed by it too. */
  public_key: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
}

/** Second-step checks of an account since the last one that passed, across sign-in windows (migrations/0030). */
export interface SecondFactorFailuresTable {
  user_id: number;
  failures: number;
  last_checked_at: Timestamp;
}
