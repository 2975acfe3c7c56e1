import type { Kysely } from 'kysely';
import type { Context } from '../../../context.js';
import type { Database } from '../../../db/schema.js';
import { inTransaction } from '../../../db/transaction.js';
import { ApiError, InvalidRequest } from '../../../lib/errors.js';
import { generateSecret, hashSecret, PREFIX } from '../../../lib/secrets.js';
import type { Client } from '../../clients/client.js';
import { insertPushedRequest, takePushedRequest } from '../pushed-requests.repository.js';
import {
  AUTHORIZE_PARAMETERS,
  checkClient,
  checkPushedParameters,
  recheckPushedParameters,
} from './checks.js';
import { savePendingRequest } from './pending.service.js';
import { type AuthorizationRequest, AuthorizeRedirectError } from './request.js';

/** RFC 9126 §2.2: a short lifetime; the browser is sent on at once, a minute is plenty. */
export const PUSHED_REQUEST_TTL_SECONDS = 60;

/** The random part of a request_uri we issue: 32 bytes of base64url. */
const RANDOM_PART = /^[A-Za-z0-9_-]{43}$/;

/** Whether an authorize request's request_uri is one of the PAR endpoint's (RFC 9126 §2.2). */
export function isPushedRequestUri(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX.requestUri);
}

/** The answer of the PAR endpoint (RFC 9126 §2.2). */
export interface PushedAuthorizationResponse {
  request_uri: string;
  expires_in: number;
}

/**
 * Checks and stores the authorization request a client pushed (RFC 9126 §2.1) and returns the
 * request_uri the browser brings to the authorization endpoint. The parameters pass the same checks
 * as at authorize; any problem throws its `ApiError`, answered as JSON (RFC 9126 §2.3). Only the
 * SHA-256 of the request_uri's random part is stored, with the checked authorize
 * parameters (never the client's credentials).
 */
export async function pushAuthorizationRequest(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  params: Record<string, string | undefined>,
): Promise<PushedAuthorizationResponse> {
  // RFC 9126 §2.1: request_uri is the one authorize parameter that must not be pushed.
  if (params.request_uri !== undefined) {
    throw new InvalidRequest(
      'request_uri must not be sent to the pushed authorization request endpoint (RFC 9126 section 2.1); push the authorization parameters themselves.',
    );
  }
  // RFC 9126 §3 allows a request object here; this server supports none (discovery says so).
  if (params.request !== undefined) {
    throw new InvalidRequest(
      'Request objects (the request parameter) are not supported; push the authorization parameters as form parameters.',
    );
  }
  checkPushedParameters(client, params);
  const parameters: Record<string, string> = {};
  for (const name of AUTHORIZE_PARAMETERS) {
    const value = params[name];
    if (value !== undefined) parameters[name] = value;
  }
  const requestUri = generateSecret('requestUri');
  const now = ctx.clock.now();
  await insertPushedRequest(db, {
    requestUriHash: hashSecret(requestUri.slice(PREFIX.requestUri.length)),
    clientPk: client.id,
    parameters,
    at: now,
    expiresAt: new Date(now.getTime() + PUSHED_REQUEST_TTL_SECONDS * 1000),
  });
  return { request_uri: requestUri, expires_in: PUSHED_REQUEST_TTL_SECONDS };
}

/**
 * What authorize got for a request_uri: the pushed request, now a pending request with this id;
 * or the problem its parameters have now (an `AuthorizeRedirectError`, or an `ApiError` that is
 * not redirectable when its redirect_uri is no longer registered).
 */
export type PushedRequestOutcome =
  | { request: AuthorizationRequest; pendingId: string }
  | { error: AuthorizeRedirectError | ApiError };

/**
 * The authorization endpoint's side of PAR (RFC 9126 §4): the request takes `client_id` and
 * `request_uri` alone, and the pushed parameters are used (any others are ignored). In one
 * transaction the pushed request is taken, once, and stored as a pending request (the one the
 * sign-in, second-factor and consent pages carry on), so a reload of the same URL finds nothing.
 * Undefined when the request_uri is unknown, expired, used or another client's; a client_id
 * problem throws a non-redirectable `ApiError`. `staleSessionHash` as for `savePendingRequest`.
 */
export async function usePushedRequest(
  db: Kysely<Database>,
  ctx: Context,
  query: Record<string, unknown>,
  staleSessionHash: string | null,
): Promise<PushedRequestOutcome | undefined> {
  const client = await checkClient(db, query);
  const requestUri = query.request_uri;
  if (!isPushedRequestUri(requestUri)) return undefined;
  const random = requestUri.slice(PREFIX.requestUri.length);
  if (!RANDOM_PART.test(random)) return undefined;
  return inTransaction(db, async (trx) => {
    const pushed = await takePushedRequest(trx, hashSecret(random), client.id, ctx.clock.now());
    if (!pushed) return undefined;
    let request: AuthorizationRequest;
    try {
      // The client may have changed in the meantime: its redirect_uri, its wallet right.
      request = recheckPushedParameters(client, pushed.parameters);
    } catch (error) {
      // Used up all the same: a pushed request is answered once.
      if (error instanceof AuthorizeRedirectError || error instanceof ApiError) return { error };
      throw error;
    }
    const pendingId = await savePendingRequest(trx, ctx, request, staleSessionHash);
    return { request, pendingId };
  });
}
