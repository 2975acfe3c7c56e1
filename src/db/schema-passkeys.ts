import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from './column-types.js';

/* The tables of passkeys (migrations/0021); part of schema.ts's Database. */

/** A registered WebAuthn credential: its public key and state, never a secret. */
export interface PasskeysTable {
  id: Generated<number>;
  user_id: number;
  /** base64url, unique. */
  credential_id: string;
  /** The COSE public key, base64url. */
  public_key: string;
  /** bigint: read as a string by pg, written as a number. */
  counter: ColumnType<string | number, number, number>;
  transports: string[];
  aaguid: string;
  backup_eligible: boolean;
  backed_up: boolean;
  name: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}

/** A WebAuthn ceremony under way: only the SHA-256 of its browser-held id and of its challenge. */
export interface WebauthnChallengesTable {
  ceremony_hash: string;
  challenge_hash: string;
  purpose: 'register' | 'authenticate';
  user_id: number | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}
