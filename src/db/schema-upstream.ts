import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from './column-types.js';

/* Sign-in through an account elsewhere (migrations/0040_upstream_sign_in). */

/** The kinds of provider the service can talk to. */
export type UpstreamKind = 'oidc' | 'github' | 'google' | 'apple';

/** A provider operators configured (`idp providers add`). */
export interface UpstreamProvidersTable {
  id: Generated<number>;
  /** The name in URLs (`/signin/providers/{name}/callback`) and in the CLI. */
  name: string;
  kind: UpstreamKind;
  /** What the button says: "Continue with {display_name}". */
  display_name: string;
  /** The OpenID issuer; for GitHub, the base of its web pages (https://github.com). */
  issuer: string;
  /** GitHub's API base (https://api.github.com); null for the others. */
  api_url: string | null;
  client_id: string;
  /** Sealed (lib/sealed-secret.ts); null for Apple, whose secret is a JWT made per request. */
  client_secret_sealed: string | null;
  apple_team_id: string | null;
  apple_key_id: string | null;
  /** The operator's Apple private key (PKCS#8 PEM), sealed. */
  apple_private_key_sealed: string | null;
  /** Space-separated, as sent to the provider. */
  scopes: string;
  enabled: Generated<boolean>;
  /** Whether the provider's `amr` saying `mfa` stands in for the account's own second factor. */
  trust_amr: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An account's link to a provider's stable subject. */
export interface UpstreamLinksTable {
  id: Generated<number>;
  user_id: number;
  provider_id: number;
  subject: string;
  issuer: string;
  /** The address the provider gave when linked (shown on the account page; never matched on). */
  email: string | null;
  /** The provider's username or name at the time, to tell links apart. */
  label: string | null;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}

/** One trip to a provider, keyed by the SHA-256 of its `state`. */
export interface UpstreamRoundTripsTable {
  state_hash: string;
  provider_id: number;
  purpose: 'sign_in' | 'link' | 'reauth';
  /** For `link` and `reauth`: the signed-in account that asked. */
  user_id: number | null;
  request_id: string | null;
  return_to: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** An identity proved at a provider that no account holds yet. */
export interface UpstreamPendingTable {
  token_hash: string;
  provider_id: number;
  subject: string;
  issuer: string;
  email: string | null;
  email_verified: boolean;
  label: string | null;
  suggested_username: string | null;
  amr: ColumnType<string[], string | undefined, string>;
  request_id: string | null;
  return_to: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}
