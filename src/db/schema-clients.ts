import type { Generated } from 'kysely';
import type { SigningAlgorithm } from '../lib/signing-algorithms.js';

/**
 * The protocol settings of `clients` (OIDC Registration §2, RFC 7591 §2, RFC 9449 §5.2,
 * RP-Initiated and Back-Channel Logout 1.0), added by migrations 0022 to 0027; part of schema.ts's
 * ClientsTable.
 */
export interface ClientProtocolColumns {
  /** Which key signs its id_tokens (migrations/0022; OIDC Registration §2). */
  id_token_signed_response_alg: Generated<SigningAlgorithm>;
  /** No secret: `token_endpoint_auth_method: none` (migrations/0024). */
  is_public: Generated<boolean>;
  /** `dpop_bound_access_tokens` (RFC 9449 §5.2). */
  require_dpop: Generated<boolean>;
  /** OIDC RP-Initiated Logout 1.0 §3.1: where the browser may return after logout (migrations/0025). */
  post_logout_redirect_uris: Generated<string[]>;
  /** migrations/0026: where logout tokens are POSTed (OIDC Back-Channel Logout 1.0 §2.2), or null. */
  backchannel_logout_uri: Generated<string | null>;
  /** migrations/0027: the logo shown on its sign-in and consent pages (RFC 7591 §2 `logo_uri`), or null. */
  logo_uri: Generated<string | null>;
  /** migrations/0041: may use the device authorization grant (RFC 8628). */
  device_grant: Generated<boolean>;
}
