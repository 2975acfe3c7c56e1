import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from './column-types.js';

/* Applications that site owners register and run themselves (migrations/0038_developer_portal). */

/** How a client came to be: made by an operator (CLI, console), in the portal, or by RFC 7591 registration. */
export type ClientRegisteredVia = 'operator' | 'portal' | 'registration';

/** The columns migrations/0038 adds to `clients`; part of schema.ts's ClientsTable. */
export interface ClientPortalColumns {
  /** When an operator approved it; null: not reviewed (CLIENT_REGISTRATION decides what it may do). */
  approved_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  registered_via: Generated<ClientRegisteredVia>;
  /** When its owners asked for the wallet right (an operator grants it); null when they did not. */
  wallet_requested_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When its owners or an operator deleted it: it is then disabled for good and listed nowhere. */
  deleted_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** SHA-256 of its RFC 7592 registration access token; null unless registered through RFC 7591. */
  registration_access_token_hash: ColumnType<string | null, string | null | undefined, string | null>;
}

/** The owner and co-owners of an application. */
export interface ClientOwnersTable {
  client_pk: number;
  user_id: number;
  role: 'owner' | 'co_owner';
  added_at: Timestamp;
}

/** A client's secrets, as SHA-256 hashes: several may be valid at once, each until its expiry. */
export interface ClientSecretsTable {
  id: Generated<number>;
  client_pk: number;
  secret_hash: string;
  /** The secret's last four characters ('' for secrets from before migrations/0038). */
  hint: string;
  created_at: Timestamp;
  /** Null: valid until replaced or revoked. */
  expires_at: Timestamp | null;
}

/** RFC 7591 §3 initial access tokens: only their hashes. */
export interface RegistrationTokensTable {
  id: Generated<number>;
  token_hash: string;
  /** Clients registered with it belong to this account; null for an operator's token. */
  owner_user_id: number | null;
  /** `cli`, or `user:<id>` for a token made in the portal. */
  created_by: string;
  uses_left: number;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** The latest refused requests of an application, for its owners. */
export interface ClientRefusalsTable {
  id: Generated<number>;
  client_pk: number;
  at: Timestamp;
  /** Which endpoint refused: `authorize`, `par`, `token`, … */
  endpoint: string;
  /** The error code answered (RFC 6749 §4.1.2.1, §5.2). */
  error: string;
  /** Why, in words an integrator can act on. */
  reason: string;
  /** The values received that the reason is about (never a secret, code or token). */
  received: ColumnType<Record<string, unknown>, string | undefined, string>;
}
