import type { Generated } from 'kysely';
import type { Timestamp } from './column-types.js';

/* The tables of back-channel logout (migrations/0026); part of schema.ts's Database. */

/**
 * A logout token to deliver to one client for one ended session (OIDC Back-Channel Logout 1.0
 * §2.4–2.5): its claims, never the signed token, which the worker signs at each attempt.
 */
export interface BackchannelLogoutsTable {
  id: Generated<number>;
  client_pk: number;
  /** The token's `sub`: the user id, as in id_tokens. */
  user_id: number;
  /** The token's `sid`: the ended browser session's public id. */
  sid: string;
  /** Why the session ended (`sign_out`, `password_reset`, `expired`…), for the operator. */
  reason: string;
  created_at: Timestamp;
  /** Deliveries started (claims), whatever came of them. */
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  claim_id: string | null;
  claimed_until: Timestamp | null;
  delivered_at: Timestamp | null;
  failed_at: Timestamp | null;
  last_error: string | null;
  purge_after: Timestamp | null;
}
