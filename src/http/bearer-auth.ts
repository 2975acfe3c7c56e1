import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Deps } from '../context.js';
import { InvalidToken, Unauthorized } from '../lib/errors.js';
import { hashSecret } from '../lib/secrets.js';
import { checkDpopProof } from '../modules/dpop/dpop.service.js';
import {
  type AccessTokenContext,
  cachedAccessToken,
  lookUpAccessToken,
} from '../modules/oidc/bearer.service.js';
import { noteRequestLog } from './request-log.js';
import { RequestValues } from './request-values.js';

export type { AccessTokenContext } from '../modules/oidc/bearer.service.js';

/**
 * `credentials = "Bearer" 1*SP b64token` (RFC 6750 §2.1), or the same with "DPoP" (RFC 9449 §7.1);
 * the scheme name is case-insensitive (RFC 9110 §11.1). Anything else in the header is not an
 * access token credential at all.
 */
const TOKEN_CREDENTIALS = /^(bearer|dpop) +([A-Za-z0-9\-._~+/]+=*)$/i;

function has(value: unknown, key: string): boolean {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key);
}

/** An access token as the Authorization header brought it. */
interface PresentedToken {
  token: string;
  /** Sent with the DPoP scheme (RFC 9449 §7.1) rather than Bearer. */
  dpop: boolean;
}

/**
 * The token of the `Authorization: Bearer` (or `DPoP`) header.
 * @throws Unauthorized (401 `unauthorized`, no error attribute: RFC 6750 §3.1) when there is no
 * such header, when it is not `Bearer <token>` or `DPoP <token>`, or when a token is sent in the
 * query string or the form body: we accept the header only (RFC 6750 §2.3 makes the query form a
 * last resort that leaks tokens into logs and histories; docs/api.md counts it as no header).
 */
function extractAccessToken(request: FastifyRequest): PresentedToken {
  if (has(request.query, 'access_token') || has(request.body, 'access_token')) {
    throw new Unauthorized(
      'Send the access token only in the "Authorization: Bearer <token>" header, never in the query string or body.',
      true,
    );
  }
  const header = request.headers.authorization;
  if (header === undefined || header === '') throw new Unauthorized(undefined, true);
  const match = TOKEN_CREDENTIALS.exec(header);
  if (!match?.[1] || !match[2]) {
    throw new Unauthorized(
      'The Authorization header must be "Bearer <token>" (or "DPoP <token>" with a DPoP proof) with exactly one token.',
      true,
    );
  }
  return { token: match[2], dpop: match[1].length === 4 };
}

const tokenHashes = new WeakMap<FastifyRequest, string>();

/**
 * SHA-256 of the request's access token (Bearer or DPoP scheme), computed once per request: the
 * rate limit and the authentication both key on it. Undefined when the Authorization header holds
 * no such token.
 */
export function bearerTokenHash(request: FastifyRequest): string | undefined {
  const token = TOKEN_CREDENTIALS.exec(request.headers.authorization ?? '')?.[2];
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

/** The token's context from the cache or the database, or the 401 that refuses it. */
async function workingToken(
  request: FastifyRequest,
  deps: Deps,
  tokenHash: string,
  scheme: 'bearer' | 'dpop',
): Promise<AccessTokenContext> {
  const now = deps.ctx.clock.now().getTime();
  const found =
    cachedAccessToken(deps.ctx, tokenHash, now) ??
    (await lookUpAccessToken(deps.db, deps.ctx, tokenHash, now));
  if (typeof found !== 'string') {
    // Whose token it is, on the request's log line, even if its scheme or DPoP proof is refused next.
    noteRequestLog(request, { client_id: found.clientId, user_id: found.userId });
    return found;
  }
  // Which rule refused it goes to the log only (RFC 6750 §3.1 tells the caller no more than invalid_token).
  noteRequestLog(request, { error_detail: found });
  throw found === 'expired access token'
    ? new InvalidToken('The access token has expired.', scheme)
    : new InvalidToken(undefined, scheme);
}

/**
 * Authenticates the request's access token (one indexed query, or none from the token cache). A
 * token bound to a DPoP key is accepted only as `Authorization: DPoP` with a proof of that key
 * whose `ath` is the token's hash (RFC 9449 §7.1); an unbound one only as `Bearer`.
 * @throws Unauthorized when no well-formed credential was sent (see `extractAccessToken`).
 * @throws InvalidToken (401 `invalid_token`) for a well-formed token, whatever its prefix, that
 * does not work, or that came with the wrong scheme or DPoP key; which rule
 * refused it goes to the log only.
 * @throws DpopProofError (401 `invalid_dpop_proof` or `use_dpop_nonce`) for a refused proof.
 */
export async function authenticateBearer(request: FastifyRequest, deps: Deps): Promise<AccessTokenContext> {
  const presented = extractAccessToken(request);
  const tokenHash = hashOfToken(request, presented.token);
  if (presented.dpop) return authenticateDpop(request, deps, tokenHash);
  const context = await workingToken(request, deps, tokenHash, 'bearer');
  // RFC 9449 §7.1: a bound token sent as a bearer token is refused, or DPoP would protect nothing.
  if (context.jkt !== null) {
    throw new InvalidToken(
      'This access token is bound to a DPoP key: send it as "Authorization: DPoP <token>" with a DPoP proof.',
      'bearer',
    );
  }
  return context;
}

/**
 * The token first, then its proof: only a working, bound token gets as far as recording a proof,
 * so a caller without one cannot fill the replay store.
 */
async function authenticateDpop(
  request: FastifyRequest,
  deps: Deps,
  tokenHash: string,
): Promise<AccessTokenContext> {
  const context = await workingToken(request, deps, tokenHash, 'dpop');
  if (context.jkt === null) {
    throw new InvalidToken(
      'This access token is not bound to a DPoP key: send it as "Authorization: Bearer <token>".',
      'dpop',
    );
  }
  const proof = await checkDpopProof(deps.db, deps.ctx, {
    header: request.headers.dpop,
    method: request.method,
    path: request.url.split('?', 1)[0] ?? '/',
    accessTokenHash: tokenHash,
    at: 'resource',
  });
  if (context.jkt !== proof.jkt) {
    throw new InvalidToken(
      'The DPoP proof is signed by another key than the one the token is bound to.',
      'dpop',
    );
  }
  proof.keepKey();
  return context;
}

const contexts = new RequestValues<AccessTokenContext>('requireBearer');

/**
 * A `preHandler` that requires a valid access token (Bearer, or DPoP with its proof); the handler
 * then reads it with `bearerContext(request)`. Routes using it declare `config.auth: 'bearer'`.
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
