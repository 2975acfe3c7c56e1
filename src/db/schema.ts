import type { ColumnType, Generated } from 'kysely';
import type { SigningAlgorithm } from '../lib/signing-algorithms.js';
import type { DefaultedTimestamp, Timestamp } from './column-types.js';
import type { ClientProtocolColumns } from './schema-clients.js';
import type { ConsoleSessionsTable, OperatorsTable } from './schema-console.js';
import type {
  ClientOwnersTable,
  ClientPortalColumns,
  ClientRefusalsTable,
  ClientSecretsTable,
  RegistrationTokensTable,
} from './schema-developers.js';
import type { DeviceCodesTable } from './schema-device.js';
import type { DpopProofsTable } from './schema-dpop.js';
import type { MobilePendingSignInsTable, SecondFactorFailuresTable } from './schema-lockout.js';
import type { BackchannelLogoutsTable } from './schema-logout.js';
import type {
  EmailVerificationsTable,
  MailOutboxTable,
  MailRecipientSendsTable,
  PasswordResetsTable,
} from './schema-mail.js';
import type { PendingSignInsTable, RecoveryCodesTable, TotpCredentialsTable } from './schema-mfa.js';
import type { ClientParColumns, PushedAuthorizationRequestsTable } from './schema-par.js';
import type { PasskeysTable, WebauthnChallengesTable } from './schema-passkeys.js';
import type { IncidentsTable, PlatformStateTable } from './schema-platform.js';
import type { MetricRollupsTable } from './schema-rollups.js';
import type { SealingKeyCheckTable } from './schema-sealing.js';
import type {
  UpstreamLinksTable,
  UpstreamPendingTable,
  UpstreamProvidersTable,
  UpstreamRoundTripsTable,
} from './schema-upstream.js';
import type { WalletIdempotencyKeysTable, WalletsTable, WalletTransactionsTable } from './schema-wallet.js';

export type { IncidentSeverity, IncidentsTable, PlatformStatusValue } from './schema-platform.js';

export interface UsersTable {
  id: Generated<number>;
  /** As the user chose it, NFKC-normalized; unique on lower(username). */
  username: string;
  /** usernameSkeleton(username): unique, so no two usernames look alike; null only for users from before it. */
  username_skeleton: string | null;
  password_hash: string;
  email: string | null;
  email_verified: Generated<boolean>;
  /** migrations/0032: another account confirmed this address first; `email_verified` is not released. */
  email_claim_withheld: Generated<boolean>;
  display_name: string | null;
  verification_level: Generated<number>;
  avatar_url: string | null;
  game_name: string | null;
  game_url: string | null;
  tag_label: string | null;
  tag_kind: string | null;
  tag_slug: string | null;
  disabled_at: Timestamp | null;
  /** When the account was deleted (migrations/0014): its profile cleared, always disabled too. */
  deleted_at: Timestamp | null;
  created_at: DefaultedTimestamp;
  updated_at: DefaultedTimestamp;
}

export interface ClientsTable extends ClientParColumns, ClientProtocolColumns, ClientPortalColumns {
  id: Generated<number>;
  client_id: string;
  name: string;
  site_url: string;
  redirect_uris: string[];
  wallet: Generated<boolean>;
  official_mobile: Generated<boolean>;
  disabled_at: Timestamp | null;
  created_at: DefaultedTimestamp;
  updated_at: DefaultedTimestamp;
}

export interface BrowserSessionsTable {
  id_hash: string;
  user_id: number;
  auth_time: Timestamp;
  /** RFC 8176 methods of the sign-in. */
  amr: ColumnType<string[], string[] | undefined, string[]>;
  created_at: Timestamp;
  expires_at: Timestamp;
  user_agent: string | null;
  ip: string | null;
  /** migrations/0026: the public session id, the `sid` claim (Back-Channel Logout 1.0 §2.4); not a credential. */
  sid: Generated<string>;
  /** migrations/0031: the last re-authentication without a new sign-in (the password or a code), or null. */
  reauthenticated_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface AuthorizationRequestsTable {
  id_hash: string;
  client_pk: number;
  redirect_uri: string;
  scopes: string[];
  state: string;
  nonce: string | null;
  code_challenge: string | null;
  prompt: string | null;
  /** OIDC Core §3.1.2.1 max_age in seconds, or null. */
  max_age: number | null;
  /** `acr_values=mfa` was asked for. */
  require_mfa: ColumnType<boolean, boolean | undefined, boolean>;
  stale_session_hash: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
}

export interface ConsentsTable {
  user_id: number;
  client_pk: number;
  scopes: string[];
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AuthorizationCodesTable {
  code_hash: string;
  client_pk: number;
  user_id: number;
  redirect_uri: string;
  scopes: string[];
  code_challenge: string | null;
  nonce: string | null;
  auth_time: Timestamp;
  /** RFC 8176 methods of the sign-in the code was issued from. */
  amr: ColumnType<string[], string[] | undefined, string[]>;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
  /** migrations/0026: the browser session that approved the code; null for none. */
  sid: Generated<string | null>;
}

export interface GrantsTable {
  id: Generated<number>;
  user_id: number;
  client_pk: number;
  scopes: string[];
  code_hash: string | null;
  auth_time: Timestamp;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  /** migrations/0026: the browser session whose code made the grant; null for the mobile app's. */
  sid: Generated<string | null>;
}

export interface AccessTokensTable {
  token_hash: string;
  grant_id: number;
  user_id: number;
  client_pk: number;
  scopes: string[];
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  /** RFC 9449 §6: the thumbprint of the DPoP key the token is bound to; null for a bearer token. */
  jkt: Generated<string | null>;
}

export interface RefreshTokensTable {
  token_hash: string;
  grant_id: number;
  created_at: Timestamp;
  expires_at: Timestamp;
  rotated_at: Timestamp | null;
  revoked_at: Timestamp | null;
  /** RFC 9449 §5: a public client's refresh token is bound to its DPoP key. */
  jkt: Generated<string | null>;
}

export interface SigningKeysTable {
  kid: string;
  algorithm: SigningAlgorithm;
  private_key_pem: string;
  public_jwk: ColumnType<Record<string, unknown>, string, string>;
  created_at: Timestamp;
  retired_at: Timestamp | null;
}

export interface PremiumPeriodsTable {
  id: Generated<number>;
  user_id: number;
  billing_period: 'month' | 'year';
  starts_at: Timestamp;
  ends_at: Timestamp;
  created_at: Timestamp;
}

export interface MobileChallengesTable {
  /** SHA-256 of the challenge; the challenge itself is never stored. */
  challenge_hash: string;
  client_pk: number;
  device_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface MobileDevicesTable {
  id: Generated<number>;
  client_pk: number;
  device_id: string;
  user_id: number;
  /** The raw 32-byte Ed25519 public key, base64url without padding. */
  public_key: string;
  grant_id: number;
  label: string;
  created_at: Timestamp;
  last_used_at: Timestamp;
  revoked_at: Timestamp | null;
}

export interface SignInAttemptsTable {
  user_id: number;
  /** Whose attempts: '' for anyone, `device:…` or `mobile:…` for one that signed in before. */
  source: Generated<string>;
  /** Password checks since `window_started_at` (failed ones: a success deletes the row). */
  attempts: number;
  window_started_at: Timestamp;
}

/** The append-only audit log (migrations/0009_audit). */
export interface AuditEventsTable {
  id: Generated<number>;
  at: Timestamp;
  actor: string;
  action: string;
  subject: string | null;
  ip: string | null;
  /** jsonb: written as JSON text, read as an object. */
  details: ColumnType<Record<string, unknown>, string, string>;
}

export interface Database {
  users: UsersTable;
  clients: ClientsTable;
  platform_state: PlatformStateTable;
  incidents: IncidentsTable;
  browser_sessions: BrowserSessionsTable;
  authorization_requests: AuthorizationRequestsTable;
  consents: ConsentsTable;
  authorization_codes: AuthorizationCodesTable;
  grants: GrantsTable;
  access_tokens: AccessTokensTable;
  refresh_tokens: RefreshTokensTable;
  signing_keys: SigningKeysTable;
  premium_periods: PremiumPeriodsTable;
  wallets: WalletsTable;
  wallet_transactions: WalletTransactionsTable;
  wallet_idempotency_keys: WalletIdempotencyKeysTable;
  mobile_challenges: MobileChallengesTable;
  mobile_devices: MobileDevicesTable;
  sign_in_attempts: SignInAttemptsTable;
  audit_events: AuditEventsTable;
  mail_outbox: MailOutboxTable;
  mail_recipient_sends: MailRecipientSendsTable;
  email_verifications: EmailVerificationsTable;
  password_resets: PasswordResetsTable;
  totp_credentials: TotpCredentialsTable;
  recovery_codes: RecoveryCodesTable;
  pending_sign_ins: PendingSignInsTable;
  mobile_pending_sign_ins: MobilePendingSignInsTable;
  second_factor_failures: SecondFactorFailuresTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  pushed_authorization_requests: PushedAuthorizationRequestsTable;
  dpop_proofs: DpopProofsTable;
  backchannel_logouts: BackchannelLogoutsTable;
  metric_rollups: MetricRollupsTable;
  operators: OperatorsTable;
  console_sessions: ConsoleSessionsTable;
  client_owners: ClientOwnersTable;
  client_secrets: ClientSecretsTable;
  registration_tokens: RegistrationTokensTable;
  client_refusals: ClientRefusalsTable;
  upstream_providers: UpstreamProvidersTable;
  upstream_links: UpstreamLinksTable;
  upstream_round_trips: UpstreamRoundTripsTable;
  upstream_pending: UpstreamPendingTable;
  device_codes: DeviceCodesTable;
  sealing_key_check: SealingKeyCheckTable;
}
