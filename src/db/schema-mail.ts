import type { Generated } from 'kysely';
import type { Timestamp } from './column-types.js';

/* The tables of e-mail and of the links it carries; part of schema.ts's Database. */

/** migrations/0013: e-mail waiting to be sent, sent, or given up on. */
export interface MailOutboxTable {
  id: Generated<number>;
  kind: string;
  recipient: string;
  locale: string;
  subject: string;
  text_body: string;
  html_body: string;
  created_at: Timestamp;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  claim_id: string | null;
  claimed_until: Timestamp | null;
  sent_at: Timestamp | null;
  failed_at: Timestamp | null;
  last_error: string | null;
  purge_after: Timestamp | null;
  /** migrations/0018: the account the message is about, for the per-account limit. */
  user_id: number | null;
}

/** migrations/0032: one row per message queued to an address (its SHA-256), for the per-address limit. */
export interface MailRecipientSendsTable {
  recipient_hash: string;
  kind: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** migrations/0015, 0017: e-mail links that `verify` an address or `change` to it; only the token's SHA-256 is kept. */
export interface EmailVerificationsTable {
  id: Generated<number>;
  token_hash: string;
  user_id: number;
  /** The address the link was sent to, and verifies. */
  email: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  /** migrations/0017: a `verify` link confirms the address; a `change` link makes it the user's. */
  purpose: Generated<'verify' | 'change'>;
}

/** migrations/0016: password reset links; only the token's SHA-256 is kept. */
export interface PasswordResetsTable {
  id: Generated<number>;
  token_hash: string;
  user_id: number;
  /** The address the link was sent to: a reset verifies it while it is still the user's. */
  email: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}
