import type { ColumnType } from 'kysely';
import type { Timestamp } from './column-types.js';

/* The table of pushed authorization requests (RFC 9126, migrations/0023); part of schema.ts's Database. */

/** A pushed request waiting for the authorization endpoint; only its request_uri's SHA-256 is kept. */
export interface PushedAuthorizationRequestsTable {
  request_uri_hash: string;
  client_pk: number;
  /** jsonb: the checked authorize parameters, written as JSON text, read as an object. */
  parameters: ColumnType<Record<string, string>, string, never>;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** The columns migrations/0023 adds to `clients`. */
export interface ClientParColumns {
  /** RFC 9126 §6 client metadata: authorize takes this client's requests only through PAR. */
  require_pushed_authorization_requests: ColumnType<boolean, boolean | undefined, boolean>;
}
