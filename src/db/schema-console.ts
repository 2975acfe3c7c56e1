import type { Timestamp } from './column-types.js';

/* The operators' console (migrations/0033_console); part of schema.ts's Database. */

/** Accounts with a console role (migrations/0033_console). */
export interface OperatorsTable {
  user_id: number;
  role: 'owner' | 'support' | 'auditor';
  granted_at: Timestamp;
  /** Who granted it: `cli` or `operator:<user id>`. */
  granted_by: string;
}

/** Entries into the console (migrations/0033_console): only the cookie value's SHA-256 hash is kept. */
export interface ConsoleSessionsTable {
  id_hash: string;
  user_id: number;
  /** The account session it was opened on: it ends with that session. */
  account_session_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** The last second-factor proof (entering or re-authenticating). */
  proved_at: Timestamp;
  /** How it was last proved: `totp` or `passkey`. */
  method: string;
  ip: string | null;
}
