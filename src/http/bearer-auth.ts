import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Deps } from '../context.js';
import { InvalidToken, Unauthorized } from '../lib/errors.js';
import { hashSecret } from '../lib/secrets.js';
import {
  type AccessTokenContext,
  cachedAccessToken,
  lookUpAccessToken,
} from '../modules/oidc/bearer.service.js';
import { RequestValues } from './request-values.js';

export type { AccessTokenContext } from '../modules/oidc/bearer.service.js';

/**
 * `credentials = "Bearer" 1*SP b64token` (RFC 6750 §2.1); the scheme name is case-insensitive
 * (RFC 9110 §11.1). Anything else in the header is not a bearer credential at all.
 */
const BEARER_CREDENTIALS = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

function has(value: unknown, key: string): boolean {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key);
}

/**
 * The token of the `Authorization: Bearer` header.
 * @throws Unauthorized (401 `unauthorized`, no error attribute: RFC 6750 §3.1) when there is no
 * such header, when it is not `Bearer <token>`, or when a token is sent in the query string or the
 * form body: we accept the header only (RFC 6750 §2.3 makes the query form a last resort that leaks
 * tokens into logs and histories; CONTRACT.md §4 counts it as no header).
 */
export function extractBearerToken(request: FastifyRequest): string {
  if (has(request.query, 'access_token') || has(request.body, 'access_token')) {
    throw new Unauthorized(
      'Send the access token only in the "Authorization: Bearer <token>" header, never in the query string or body.',
    );
  }
  const header = request.headers.authorization;
  if (header === undefined || header === '') throw new Unauthorized();
  const match = BEARER_CREDENTIALS.exec(header);
  if (!match?.[1]) {
    throw new Unauthorized('The Authorization header must be "Bearer <token>" with exactly one token.');
  }
  return match[1];
}

const tokenHashes = new WeakMap<FastifyRequest, string>();

/**
 * SHA-256 of the request's bearer token, computed once per request: the rate limit and the
 * authentication both key on it. Undefined when the Authorization header holds no bearer token.
 */
export function bearerTokenHash(request: FastifyRequest): string | undefined {
  const token = BEARER_CREDENTIALS.exec(request.headers.authorization ?? '')?.[1];
  return token === undefined ? undefined : hashOfToken(request, token);
}

function hashOfToken(request: FastifyRequest, token: string): string {
  let tokenHash = tokenHashes.get(request);
  if (tokenHash === undefined) {
    tokenHash = hashSecret(token);
    tokenHashes.set(request, tokenHash);
  }
  return tokenHash;
}

/**
 * Authenticates the request's bearer token (one indexed query, or none from the token cache).
 * @throws Unauthorized when no well-formed bearer credential was sent (see `extractBearerToken`).
 * @throws InvalidToken (401 `invalid_token`) for a well-formed token, whatever its prefix, that
 * does not work (CONTRACT.md §4); which rule refused it goes to the log only.
 */
export async function authenticateBearer(request: FastifyRequest, deps: Deps): Promise<AccessTokenContext> {
  const tokenHash = hashOfToken(request, extractBearerToken(request));
  const now = deps.ctx.clock.now().getTime();
  const cached = cachedAccessToken(deps.ctx, tokenHash, now);
  if (cached) return cached;
  const found = await lookUpAccessToken(deps.db, deps.ctx, tokenHash, now);
  if (typeof found !== 'string') return found;
  request.log.info({ reason: found }, 'bearer token refused');
  throw found === 'expired access token'
    ? new InvalidToken('The access token has expired.')
    : new InvalidToken();
}

const contexts = new RequestValues<AccessTokenContext>('requireBearer');

/**
 * A `preHandler` that requires a valid bearer token; the handler then reads it with
 * `bearerContext(request)`. Routes using it declare `config.auth: 'bearer'`.
 */
export function requireBearer(deps: Deps): preHandlerAsyncHookHandler {
  return async (request) => {
    contexts.set(request, await authenticateBearer(request, deps));
  };
}

/** The token context `requireBearer` established for this request. */
export function bearerContext(request: FastifyRequest): AccessTokenContext {
  return contexts.of(request);
}
