import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AppDeps } from '../app.js';
import { InvalidToken, Unauthorized } from '../lib/errors.js';
import { hashSecret } from '../lib/secrets.js';
import type { UserRow } from '../modules/accounts/accounts.repository.js';
import { findBearerToken } from '../modules/oidc/bearer.repository.js';

/** What a valid access token grants: who, through which client, with which scopes. */
export interface AccessTokenContext {
  /** SHA-256 of the token (its primary key): what a per-token rate limit or a revocation keys on. */
  tokenHash: string;
  grantId: number;
  userId: number;
  /** The client's database id. */
  clientPk: number;
  /** The client's public `client_id` (`pk_…`). */
  clientId: string;
  scopes: string[];
  expiresAt: Date;
  user: UserRow;
}

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
 * Authenticates the request's bearer token with one indexed query (the token by its hash, joined
 * with its grant, user and client).
 * @throws Unauthorized when no well-formed bearer credential was sent (see `extractBearerToken`).
 * @throws InvalidToken (401 `invalid_token`) for a well-formed token, whatever its prefix, that is
 * unknown, expired (against `deps.clock`), revoked, of a revoked grant, of a disabled user or of a
 * disabled client (CONTRACT.md §4, SPEC.md rule 2).
 */
export async function authenticateBearer(
  request: FastifyRequest,
  deps: Pick<AppDeps, 'db' | 'clock' | 'tokenCache'>,
): Promise<AccessTokenContext> {
  const tokenHash = hashOfToken(request, extractBearerToken(request));
  const now = deps.clock.now().getTime();
  const cached = deps.tokenCache?.get(tokenHash, now);
  if (cached) return cached;
  const readVersion = deps.tokenCache?.readVersion ?? 0;
  const row = await findBearerToken(deps.db, tokenHash);
  const refusal = !row
    ? 'unknown access token'
    : row.expiresAt.getTime() <= deps.clock.now().getTime()
      ? 'expired access token'
      : row.tokenRevokedAt
        ? 'access token revoked'
        : row.grantRevokedAt
          ? 'grant revoked'
          : row.user.disabled_at
            ? 'user disabled'
            : row.clientDisabledAt
              ? 'client disabled'
              : undefined;
  if (!row || refusal) {
    // Which rule refused it is for our log; the caller learns only that the token does not work.
    request.log.info({ reason: refusal }, 'bearer token refused');
    throw refusal === 'expired access token'
      ? new InvalidToken('The access token has expired.')
      : new InvalidToken();
  }
  const context: AccessTokenContext = {
    tokenHash: row.tokenHash,
    grantId: row.grantId,
    userId: row.user.id,
    clientPk: row.clientPk,
    clientId: row.clientId,
    scopes: row.scopes,
    expiresAt: row.expiresAt,
    user: row.user,
  };
  deps.tokenCache?.set(context, now, readVersion);
  return context;
}

const contexts = new WeakMap<FastifyRequest, AccessTokenContext>();

/**
 * A `preHandler` that requires a valid bearer token; the handler then reads it with
 * `bearerContext(request)`. Routes using it declare `config.auth: 'bearer'`.
 */
export function requireBearer(
  deps: Pick<AppDeps, 'db' | 'clock' | 'tokenCache'>,
): preHandlerAsyncHookHandler {
  return async (request) => {
    contexts.set(request, await authenticateBearer(request, deps));
  };
}

/** The token context `requireBearer` established for this request. */
export function bearerContext(request: FastifyRequest): AccessTokenContext {
  const context = contexts.get(request);
  if (!context) throw new Error(`${request.method} ${request.url}: requireBearer did not run on this route`);
  return context;
}
