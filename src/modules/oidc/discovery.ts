import { MFA_ACR } from '../../lib/amr.js';
import { DPOP_ALGORITHMS } from '../../lib/errors.js';
import { SIGNING_ALGORITHMS } from '../../lib/signing-algorithms.js';
import { ALL_SCOPES, claimsFor } from '../oauth/scopes.js';
import type { DiscoveryDocument } from './oidc.schemas.js';

/** Claims of the id_token itself, besides the profile claims the scopes release (OIDC Core §2). */
const PROTOCOL_CLAIMS = [
  'sub',
  'id',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'at_hash',
  'amr',
  'acr',
  // Back-Channel Logout 1.0 §2.4: id_tokens of a browser sign-in name its session.
  'sid',
];

/** Client authentication at the token, revocation and introspection endpoints. */
const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'];

/**
 * The OpenID Provider Metadata (OIDC Discovery 1.0 §3, RFC 8414 §2) served at
 * `/.well-known/openid-configuration`. `issuer` is PUBLIC_URL exactly: a client
 * such as openid-client compares it with the URL it discovered from, character for character
 * (OIDC Discovery §4.3), and every endpoint is absolute under it. `registration`: whether RFC 7591
 * registration is open (CLIENT_REGISTRATION other than `closed`).
 */
export function discoveryDocument(
  publicUrl: string,
  options: { registration?: boolean } = {},
): DiscoveryDocument {
  const at = (path: string) => `${publicUrl}${path}`;
  return {
    issuer: publicUrl,
    authorization_endpoint: at('/api/v1/oauth/authorize'),
    token_endpoint: at('/api/v1/oauth/token'),
    userinfo_endpoint: at('/api/v1/oauth/userinfo'),
    jwks_uri: at('/api/v1/oauth/jwks'),
    revocation_endpoint: at('/api/v1/oauth/revoke'),
    introspection_endpoint: at('/api/v1/oauth/introspect'),
    // OIDC RP-Initiated Logout 1.0 §2.1.
    end_session_endpoint: at('/api/v1/oauth/logout'),
    // RFC 8628 §4.
    device_authorization_endpoint: at('/api/v1/oauth/device_authorization'),
    scopes_supported: [...ALL_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
    ],
    subject_types_supported: ['public'],
    // docs/oauth.md: each client picks one with `idp clients create|update --id-token-alg`.
    id_token_signing_alg_values_supported: [...SIGNING_ALGORITHMS],
    // A public client sends its client_id alone (`none`), at the token and revocation endpoints.
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS, 'none'],
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS, 'none'],
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    // RFC 7636: only S256; `plain` is refused.
    code_challenge_methods_supported: ['S256'],
    claims_supported: [...new Set([...PROTOCOL_CLAIMS, ...claimsFor(ALL_SCOPES)])],
    prompt_values_supported: ['none', 'login', 'consent'],
    // docs/pages.md: `acr_values=mfa` requires a second factor; the id_token's acr says it was used.
    acr_values_supported: [MFA_ACR],
    // RFC 9207: authorize redirects carry `iss`.
    authorization_response_iss_parameter_supported: true,
    request_parameter_supported: false,
    // RFC 9126 §5: a request_uri from the PAR endpoint works whatever this says; it is about
    // request objects fetched from the client's own URIs (OIDC Discovery §3), which are not supported.
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
    // Back-Channel Logout 1.0 §2.1: logout tokens are sent, and carry `sid`.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    service_documentation: at('/api/v1/'),
    pushed_authorization_request_endpoint: at('/api/v1/oauth/par'),
    // RFC 9126 §5: the server-wide policy; a client registered with --require-par must use PAR.
    require_pushed_authorization_requests: false,
    // RFC 9449 §5.1: the algorithms of DPoP proofs accepted.
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    // RFC 8414 §2, RFC 7591 §3: left out while registration is closed, as a server without it would.
    ...(options.registration ? { registration_endpoint: at('/api/v1/oauth/register') } : {}),
  };
}
