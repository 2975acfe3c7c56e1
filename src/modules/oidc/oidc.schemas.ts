import { z } from 'zod';

const signingKey = { kid: z.string(), use: z.literal('sig') };

/**
 * The JWK Set of `GET /api/v1/oauth/jwks` (RFC 7517 §5): the public keys of the three id_token
 * algorithms, RSA (RFC 7518 §6.3.1), P-256 (§6.2.1) and Ed25519 (RFC 8037 §2).
 */
export const jwksSchema = z.object({
  keys: z.array(
    z.discriminatedUnion('kty', [
      z.object({
        kty: z.literal('RSA'),
        n: z.string(),
        e: z.string(),
        alg: z.literal('RS256'),
        ...signingKey,
      }),
      z.object({
        kty: z.literal('EC'),
        crv: z.literal('P-256'),
        x: z.string(),
        y: z.string(),
        alg: z.literal('ES256'),
        ...signingKey,
      }),
      z.object({
        kty: z.literal('OKP'),
        crv: z.literal('Ed25519'),
        x: z.string(),
        alg: z.literal('EdDSA'),
        ...signingKey,
      }),
    ]),
  ),
});

const strings = z.array(z.string());

/** OpenID Provider Metadata (OIDC Discovery §3, RFC 8414 §2). */
export const discoverySchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  userinfo_endpoint: z.string(),
  jwks_uri: z.string(),
  revocation_endpoint: z.string(),
  introspection_endpoint: z.string(),
  end_session_endpoint: z.string(),
  device_authorization_endpoint: z.string(),
  scopes_supported: strings,
  response_types_supported: strings,
  response_modes_supported: strings,
  grant_types_supported: strings,
  subject_types_supported: strings,
  id_token_signing_alg_values_supported: strings,
  token_endpoint_auth_methods_supported: strings,
  revocation_endpoint_auth_methods_supported: strings,
  introspection_endpoint_auth_methods_supported: strings,
  code_challenge_methods_supported: strings,
  claims_supported: strings,
  prompt_values_supported: strings,
  acr_values_supported: strings,
  authorization_response_iss_parameter_supported: z.boolean(),
  request_parameter_supported: z.boolean(),
  request_uri_parameter_supported: z.boolean(),
  claims_parameter_supported: z.boolean(),
  backchannel_logout_supported: z.boolean(),
  backchannel_logout_session_supported: z.boolean(),
  service_documentation: z.string(),
  pushed_authorization_request_endpoint: z.string(),
  require_pushed_authorization_requests: z.boolean(),
  dpop_signing_alg_values_supported: strings,
  /** RFC 7591 §3; absent while CLIENT_REGISTRATION is `closed`. */
  registration_endpoint: z.string().optional(),
});

export type DiscoveryDocument = z.infer<typeof discoverySchema>;
