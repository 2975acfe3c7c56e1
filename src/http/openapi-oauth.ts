/**
 * What the OpenAPI document says of the OAuth endpoints that read their own form or query (so
 * that repeated and unknown parameters are handled as RFC 6749 §3.1 asks) and so declare no
 * zod schema: their parameters, and the answers their services return (TokenResponse,
 * IntrospectionResponse…). test/http/openapi-oauth.test.ts checks real answers against them.
 */

import { REGISTRATION_DOCUMENTATION } from './openapi-registration.js';

type JsonSchema = Record<string, unknown>;

const string = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'string',
  description,
  ...extra,
});

function form(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return {
    required: true,
    content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties, required } } },
  };
}

function json(description: string, schema: JsonSchema, example: unknown): JsonSchema {
  return { description, content: { 'application/json': { schema, example } } };
}

const CLIENT_IN_BODY = {
  client_id: string('The client, when it does not authenticate with HTTP Basic (`pk_…`)'),
  client_secret: string('Its secret (`client_secret_post`), when not sent with HTTP Basic (`sk_…`)'),
};

const TOKEN_RESPONSE = {
  type: 'object',
  properties: {
    access_token: string('The access token (`at_…`)'),
    token_type: {
      type: 'string',
      enum: ['Bearer', 'DPoP'],
      description: '`DPoP` when bound to a DPoP key (RFC 9449)',
    },
    expires_in: { type: 'integer', description: 'Lifetime in seconds (7776000 by default)' },
    scope: string('The granted scopes, space-separated'),
    refresh_token: string('With `offline_access` granted (`rt_…`); each use rotates it'),
    id_token: string('A signed JWT, with `openid` granted (OpenID Connect Core §2)'),
  },
  required: ['access_token', 'token_type', 'expires_in', 'scope'],
};

const INTROSPECTION = {
  type: 'object',
  properties: {
    active: {
      type: 'boolean',
      description: 'Whether the token is active; an inactive one says nothing else',
    },
    scope: string('Its scopes'),
    client_id: string('The client it was issued to'),
    username: string("Its user's username"),
    token_type: { type: 'string', enum: ['Bearer', 'DPoP', 'refresh_token'] },
    exp: { type: 'integer', description: 'Expiry, in seconds since the epoch' },
    iat: { type: 'integer', description: 'Issue time, in seconds since the epoch' },
    sub: string("Its user's id"),
    iss: string('The issuer'),
    cnf: {
      type: 'object',
      description: 'For a DPoP-bound token: the thumbprint of its key (RFC 9449 §6.2)',
      properties: { jkt: { type: 'string' } },
      required: ['jkt'],
    },
  },
  required: ['active'],
};

const query = (name: string, required: boolean, description: string): JsonSchema => ({
  in: 'query',
  name,
  required,
  description,
  schema: { type: 'string' },
});

/** By `METHOD path`: what the OpenAPI document adds to the route's own description. */
export const OAUTH_DOCUMENTATION: Record<string, JsonSchema> = {
  'GET /api/v1/oauth/authorize': {
    parameters: [
      query('client_id', true, 'The client (`pk_…`)'),
      query('redirect_uri', true, 'One of its registered redirect URIs, exactly (loopback: any port)'),
      query('response_type', true, '`code`'),
      query('state', true, 'Chosen by the client, returned unchanged with the code'),
      query('scope', false, 'Space-separated; default `profile email verified openid`'),
      query('code_challenge', false, 'PKCE (RFC 7636): BASE64URL(SHA-256(code_verifier))'),
      query('code_challenge_method', false, '`S256` (`plain` is refused)'),
      query('nonce', false, 'Copied into the id_token'),
      query('prompt', false, '`none`, `login` or `consent`'),
      query('acr_values', false, '`mfa`: a second factor is required'),
      query('request_uri', false, 'From the PAR endpoint: then `client_id` and `request_uri` alone'),
      query('max_age', false, 'Seconds since the last sign-in beyond which the user signs in again'),
    ],
    responses: {
      '302': {
        description:
          'To `redirect_uri` with `code`, `state` and `iss` (RFC 9207); or with `error`, `error_description`, `state` and `iss` (RFC 6749 §4.1.2.1)',
      },
      '200': { description: 'The sign-in or consent page (HTML)' },
      '400': { description: 'An HTML error page, never a redirect, for an unknown client or redirect URI' },
    },
  },
  'POST /api/v1/oauth/token': {
    requestBody: form(
      {
        grant_type: {
          type: 'string',
          enum: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
        },
        device_code: string(
          'For the device_code grant (RFC 8628 §3.4): the `dc_…` of the device authorization',
        ),
        code: string('For authorization_code: the code of the redirect (`ac_…`), once, within 10 minutes'),
        redirect_uri: string('For authorization_code: the one sent to authorize'),
        code_verifier: string('For authorization_code with PKCE'),
        refresh_token: string('For refresh_token (`rt_…`)'),
        scope: string('For refresh_token: fewer scopes than granted, optionally'),
        ...CLIENT_IN_BODY,
      },
      ['grant_type'],
    ),
    responses: {
      '200': json('The tokens (`Cache-Control: no-store`)', TOKEN_RESPONSE, {
        access_token: 'at_2bXw5mQ0Zk1rJ8yUeT3vNcHa7LdPs9Gf4oWiBxEq6Rk',
        token_type: 'Bearer',
        expires_in: 7776000,
        scope: 'openid profile email verified',
        id_token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6Ii4uLiJ9.eyJpc3MiOiIuLi4ifQ.c2lnbmF0dXJl',
      }),
    },
  },
  'POST /api/v1/oauth/revoke': {
    requestBody: form(
      {
        token: string('The access or refresh token to revoke'),
        token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] },
        ...CLIENT_IN_BODY,
      },
      ['token'],
    ),
    responses: {
      '200': json(
        'Revoked, or unknown (RFC 7009 §2.2: the same answer)',
        { type: 'object', properties: { ok: { type: 'boolean', enum: [true] } }, required: ['ok'] },
        { ok: true },
      ),
    },
  },
  'POST /api/v1/oauth/introspect': {
    requestBody: form(
      {
        token: string('The access or refresh token'),
        token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] },
        ...CLIENT_IN_BODY,
      },
      ['token'],
    ),
    responses: {
      '200': json('RFC 7662 §2.2; a client sees only its own tokens', INTROSPECTION, {
        active: true,
        scope: 'openid profile',
        client_id: 'pk_Jx2mR8vQ4tLw9ZcN1bYs6EaH',
        username: 'alice',
        token_type: 'Bearer',
        exp: 1788264000,
        iat: 1780488000,
        sub: '42',
        iss: 'https://id.example.com',
      }),
    },
  },
  'POST /api/v1/oauth/par': {
    requestBody: form(
      {
        response_type: string('`code`'),
        redirect_uri: string('One of its registered redirect URIs'),
        state: string('Returned unchanged with the code'),
        scope: string('As at authorize'),
        code_challenge: string('PKCE (RFC 7636)'),
        code_challenge_method: string('`S256`'),
        nonce: string('Copied into the id_token'),
        ...CLIENT_IN_BODY,
      },
      ['response_type', 'redirect_uri', 'state'],
    ),
    responses: {
      '201': json(
        'RFC 9126 §2.2: pass `request_uri` with `client_id` to authorize within `expires_in` seconds',
        {
          type: 'object',
          properties: {
            request_uri: string('`urn:ietf:params:oauth:request_uri:…`'),
            expires_in: { type: 'integer' },
          },
          required: ['request_uri', 'expires_in'],
        },
        { request_uri: 'urn:ietf:params:oauth:request_uri:Vt3kQ8mZp2Lx', expires_in: 60 },
      ),
    },
  },
};

type Operations = Record<string, Record<string, Record<string, unknown>>>;

/** The document with the OAuth endpoints' parameters, bodies and answers added. */
export function withOAuthDocumentation<T extends { paths?: unknown }>(document: T): T {
  const paths = (document.paths ?? {}) as Operations;
  for (const [key, added] of Object.entries({ ...OAUTH_DOCUMENTATION, ...REGISTRATION_DOCUMENTATION })) {
    const [method = '', path = ''] = key.split(' ');
    const operation = paths[path]?.[method.toLowerCase()];
    if (!operation) continue;
    const { responses, ...rest } = added as { responses?: Record<string, unknown> };
    Object.assign(operation, rest);
    // The declared answers first, then those the route already has (the error body: 4XX, 5XX).
    const merged: Record<string, unknown> = { ...responses };
    for (const [status, response] of Object.entries((operation.responses ?? {}) as object)) {
      if (!(status in merged)) merged[status] = response;
    }
    operation.responses = merged;
  }
  return document;
}
