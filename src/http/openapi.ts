import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { Config } from '../config.js';
import { withResponseExamples } from './openapi-examples.js';
import { withOAuthDocumentation } from './openapi-oauth.js';
import { OPENAPI_TAGS, tagOf } from './openapi-tags.js';

type Transform = NonNullable<FastifyDynamicSwaggerOptions['transform']>;

/** The OpenAPI security requirement of each kind of route (`config.auth`). */
const SECURITY: Record<string, Array<Record<string, string[]>> | undefined> = {
  // Either scheme: a DPoP-bound token comes with the DPoP scheme and its proof (RFC 9449 §7.1).
  bearer: [{ bearer: [] }, { dpop: [] }],
  client: [{ client: [] }],
  // The mobile logout takes the device's bearer token; the other mobile routes take none.
  mobile: [{}, { bearer: [] }],
};

/** Every error. */
const ERROR_BODY = {
  description: 'An error: {ok: false, error, error_description} (docs/api.md, "Errors")',
  type: 'object',
  properties: {
    ok: { type: 'boolean', enum: [false] },
    error: { type: 'string', description: 'invalid_request, unauthorized, invalid_token, access_denied, …' },
    error_description: { type: 'string', description: 'A sentence a developer can act on' },
  },
  required: ['ok', 'error', 'error_description'],
  examples: [
    {
      ok: false,
      error: 'invalid_token',
      error_description: 'The access token is invalid, expired or revoked.',
    },
  ],
};

const FORM = 'application/x-www-form-urlencoded';
/** The pages' routes that a page script calls with JSON (the passkey ceremonies); the others take HTML forms. */
const JSON_PAGE_ROUTES = /\/passkeys?\/(options|verify)$/;

/** The OpenAPI document and the catalogue are built from the same route declarations, so they cannot drift. */
const transform: Transform = (input) => {
  const { schema: transformed, url } = jsonSchemaTransform(input) as {
    schema: Record<string, unknown> | undefined;
    url: string;
  };
  const converted = transformed ?? {};
  const isPage = (input.route.config as { auth?: string } | undefined)?.auth === 'browser';
  const schema = isPage
    ? { ...converted, ...(converted.body && !JSON_PAGE_ROUTES.test(url) ? { consumes: [FORM] } : {}) }
    : {
        ...converted,
        response: { ...(converted.response as object | undefined), '4xx': ERROR_BODY, '5xx': ERROR_BODY },
      };
  const config = input.route.config as { auth?: string; description?: string } | undefined;
  const security = config?.auth ? SECURITY[config.auth] : undefined;
  return {
    url,
    schema: {
      ...schema,
      ...(config?.description ? { summary: config.description } : {}),
      tags: [tagOf(url)],
      // Who may call it, as the catalogue says (public, bearer, client, browser, mobile).
      ...(config?.auth ? { 'x-auth': config.auth } : {}),
      ...(security ? { security } : {}),
    },
  };
};

/** Options of @fastify/swagger: the OpenAPI 3.1 document served at /api/v1/openapi.json. */
export function openApiOptions(config: Config): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'idp',
        version: '1',
        description:
          'An OAuth 2.0 / OpenID Connect identity provider: sign-in for third-party sites, profiles, the public user search, premium status, the coin wallet, the platform status and the sign-in of the official mobile app. Every error is {"ok": false, "error", "error_description"}. The rules: docs/oauth.md, docs/wallet.md, docs/mobile.md.',
      },
      servers: [{ url: config.PUBLIC_URL }],
      tags: OPENAPI_TAGS.map((tag) => ({ ...tag })),
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An access token (`at_…`).' },
          dpop: {
            type: 'http',
            scheme: 'dpop',
            description:
              'An access token bound to a DPoP key, with a `DPoP` proof header carrying `ath` (RFC 9449; docs/oauth.md "DPoP").',
          },
          client: {
            type: 'http',
            scheme: 'basic',
            description: '`client_id` and `client_secret` (or both in the form body).',
          },
          initialAccessToken: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An initial access token (`rit_…`, RFC 7591 section 3) from the developer portal or `idp registration-tokens create`.',
          },
          registrationAccessToken: {
            type: 'http',
            scheme: 'bearer',
            description:
              'The registration access token (`rat_…`) returned when the client was registered (RFC 7592).',
          },
        },
      },
    },
    transform,
    transformObject: (document) =>
      'openapiObject' in document
        ? withResponseExamples(withOAuthDocumentation(document.openapiObject))
        : document.swaggerObject,
  };
}
