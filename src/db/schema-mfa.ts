import type { Generated } from 'kysely';
import type { Timestamp } from './column-types.js';

/* The tables of second factors (migrations/0020); part of schema.ts's Database. */

/** One TOTP key per user, sealed (src/lib/sealed-secret.ts); unconfirmed while enrolment is pending. */
export interface TotpCredentialsTable {
  user_id: number;
  secret_sealed: string;
  created_at: Timestamp;
  confirmed_at: Timestamp | null;
  /** The newest RFC 6238 time step accepted: no code of it or before it is accepted again. */
  last_used_step: number | null;
}

/** Single-use recovery codes; only their SHA-256 is kept. */
export interface RecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  created_at: Timestamp;
  used_at: Timestamp | null;
}

/** The password step of a sign-in waiting for its second factor; only the cookie value's SHA-256 is kept. */
export interface PendingSignInsTable {
  id: Generated<number>;
  id_hash: string;
  user_id: number;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
  /** The first step's method: a password, or a provider's sign-in (migrations/0040). */
  first_factor: Generated<'pwd' | 'fed'>;
}
