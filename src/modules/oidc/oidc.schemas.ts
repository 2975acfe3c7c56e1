import { z } from 'zod';

/** The JWK Set of `GET /api/v1/oauth/jwks` (RFC 7517 §5). */
export const jwksSchema = z.object({
  keys: z.array(
    z.object({
      kty: z.literal('RSA'),
      n: z.string(),
      e: z.string(),
      kid: z.string(),
      alg: z.literal('RS256'),
      use: z.literal('sig'),
    }),
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
});

export type DiscoveryDocument = z.infer<typeof discoverySchema>;
