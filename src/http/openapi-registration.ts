/**
 * What the OpenAPI document says of RFC 7591 registration and RFC 7592 management, whose routes
 * read their JSON themselves (so that every refusal is an RFC 7591 §3.2.2 error): their bodies,
 * answers and tokens. test/http/openapi-registration.test.ts checks real answers against them.
 */

type JsonSchema = Record<string, unknown>;

const string = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'string',
  description,
  ...extra,
});
const strings = (description: string): JsonSchema => ({
  type: 'array',
  items: { type: 'string' },
  description,
});
const flag = (description: string): JsonSchema => ({ type: 'boolean', description });

/** RFC 7591 §2 metadata the client sends, as this server takes it. */
const METADATA: Record<string, JsonSchema> = {
  redirect_uris: strings(
    'At most 20 redirect URIs: https, or http on a loopback host; exact match at authorize. At least one, unless `grant_types` holds `urn:ietf:params:oauth:grant-type:device_code` and not `authorization_code` (a device never receives a redirect)',
  ),
  client_uri: string("Required here: the client's site (https), shown on the sign-in and consent pages"),
  client_name: string('Shown on the sign-in and consent pages (default: the host of client_uri)'),
  logo_uri: string('Its logo (https), shown on the sign-in and consent pages'),
  post_logout_redirect_uris: strings('Where RP-initiated logout may return (at most 20)'),
  backchannel_logout_uri: string('Where logout tokens are posted (OIDC Back-Channel Logout 1.0)'),
  id_token_signed_response_alg: {
    type: 'string',
    enum: ['RS256', 'ES256', 'EdDSA'],
    description: 'Default RS256',
  },
  token_endpoint_auth_method: {
    type: 'string',
    enum: ['client_secret_basic', 'client_secret_post', 'none'],
    description:
      '`none`: a public client (PKCE, no secret). A confidential client may send its secret either way, whichever it registered; the answer names client_secret_basic',
  },
  grant_types: strings(
    'Of `authorization_code`, `refresh_token` and `urn:ietf:params:oauth:grant-type:device_code` (RFC 8628: the client may use the device authorization grant); others are refused. The answer leaves out `authorization_code` for a client without redirect URIs',
  ),
  response_types: strings('`code` only; empty in the answer for a client without redirect URIs'),
  scope: string(
    'Checked (known scopes, never `wallet`) but not stored: every client may ask for every scope but `wallet`',
  ),
  dpop_bound_access_tokens: flag('Every token request must carry a DPoP proof (RFC 9449 section 5.2)'),
  require_pushed_authorization_requests: flag(
    'Authorize takes its requests only through PAR (RFC 9126 section 6)',
  ),
};

const REGISTERED = {
  type: 'object',
  properties: {
    client_id: string('`pk_…`'),
    client_secret: string(
      '`sk_…`, for a confidential client: only in the answer to the registration, this once',
    ),
    client_id_issued_at: { type: 'integer', description: 'Seconds since the epoch' },
    client_secret_expires_at: {
      type: 'integer',
      description: '0: the secret does not expire (with a secret only)',
    },
    registration_access_token: string('`rat_…`: manages this client at registration_client_uri (RFC 7592)'),
    registration_client_uri: string("This client's configuration endpoint"),
    ...METADATA,
  },
  required: [
    'client_id',
    'client_id_issued_at',
    'registration_access_token',
    'registration_client_uri',
    'client_name',
    'client_uri',
    'redirect_uris',
    'token_endpoint_auth_method',
    'grant_types',
    'response_types',
  ],
};

const EXAMPLE = {
  client_id: 'pk_Jx2mR8vQ4tLw9ZcN1bYs6EaH',
  client_secret: 'sk_V7oQ2kLm9Xr4TzW1cN8bYs3EaHgPd6Ju5FiK0qRt',
  client_id_issued_at: 1780315200,
  client_secret_expires_at: 0,
  registration_access_token: 'rat_Qm3Zk8Lp2Vx7Nc4Rt9Ws1Yb6Hd5Jf0Gu',
  registration_client_uri: 'https://id.example.com/api/v1/oauth/register/pk_Jx2mR8vQ4tLw9ZcN1bYs6EaH',
  client_name: 'Example site',
  client_uri: 'https://site.example',
  redirect_uris: ['https://site.example/callback'],
  post_logout_redirect_uris: [],
  id_token_signed_response_alg: 'RS256',
  token_endpoint_auth_method: 'client_secret_basic',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  dpop_bound_access_tokens: false,
  require_pushed_authorization_requests: false,
};

const SENT = {
  client_name: EXAMPLE.client_name,
  client_uri: EXAMPLE.client_uri,
  redirect_uris: EXAMPLE.redirect_uris,
};

const body = (required: string[], properties: Record<string, JsonSchema>, example: unknown): JsonSchema => ({
  required: true,
  content: { 'application/json': { schema: { type: 'object', properties, required }, example } },
});

const answer = (description: string, example: unknown): JsonSchema => ({
  description,
  content: { 'application/json': { schema: REGISTERED, example } },
});

const { client_secret: _secret, ...WITHOUT_SECRET } = EXAMPLE;
const CLIENT_ID = {
  in: 'path',
  name: 'client_id',
  required: true,
  description: 'The registered client (`pk_…`)',
  schema: { type: 'string' },
};
const MANAGED = {
  parameters: [CLIENT_ID],
  security: [{ registrationAccessToken: [] }],
  'x-caller':
    "the client's registration access token: `Authorization: Bearer rat_…`, returned at its registration",
};

/** By `METHOD path`: what the OpenAPI document adds to each route's own description. */
export const REGISTRATION_DOCUMENTATION: Record<string, JsonSchema> = {
  'POST /api/v1/oauth/register': {
    security: [{ initialAccessToken: [] }],
    'x-caller':
      'an initial access token: `Authorization: Bearer rit_…`, made in the developer portal or with `idp registration-tokens create`',
    description:
      'Registers a client as the developer portal does, with the same checks. Errors: 400 `invalid_redirect_uri` or `invalid_client_metadata` (RFC 7591 section 3.2.2), 401 without a working initial access token, 403 `access_denied` while CLIENT_REGISTRATION is `closed`. A refused registration spends no use of the token.',
    requestBody: body(['client_uri'], METADATA, SENT),
    responses: {
      '201': answer(
        'RFC 7591 section 3.2.1: the client, its secret this once and its registration access token',
        EXAMPLE,
      ),
    },
  },
  'GET /api/v1/oauth/register/{client_id}': {
    ...MANAGED,
    description:
      'RFC 7592 section 2.1. The secret is never in it (only its hash is stored). 401 `invalid_token` for a wrong token, an unknown or a deleted client alike.',
    responses: { '200': answer('The current metadata', WITHOUT_SECRET) },
  },
  'PUT /api/v1/oauth/register/{client_id}': {
    ...MANAGED,
    description:
      'RFC 7592 section 2.2: the metadata sent replaces the registered one (what is left out is removed or back to its default), with `client_id` in the body. token_endpoint_auth_method cannot change between `none` and a secret. The registration access token stays the same.',
    requestBody: body(
      ['client_id', 'client_uri'],
      { client_id: string("This client's id"), ...METADATA },
      { client_id: EXAMPLE.client_id, ...SENT },
    ),
    responses: { '200': answer('The metadata as registered now', WITHOUT_SECRET) },
  },
  'DELETE /api/v1/oauth/register/{client_id}': {
    ...MANAGED,
    description:
      'RFC 7592 section 2.3: the client is deleted as in the developer portal: it signs no one in again and its tokens end at once.',
    responses: { '204': { description: 'Deleted' } },
  },
};
