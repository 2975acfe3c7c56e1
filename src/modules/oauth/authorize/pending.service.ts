import type { Kysely } from 'kysely';
import type { Context } from '../../../context.js';
import type { Database } from '../../../db/schema.js';
import { isMultiFactor } from '../../../lib/amr.js';
import { redirectUriMatches } from '../../../lib/redirect-uri.js';
import { generateSecret, hashSecret } from '../../../lib/secrets.js';
import type { Client } from '../../clients/client.js';
import { findClientById } from '../../clients/clients.repository.js';
import {
  consumePendingRequest,
  findPendingRequest,
  insertAuthorizationRequest,
  type PendingRequest,
} from '../authorization-requests.repository.js';
import { normalizeScopes } from '../scopes.js';
import type { AuthorizationRequest, Prompt } from './request.js';

/** How long a user may take to sign in and decide on the consent page. */
export const PENDING_REQUEST_TTL_MS = 30 * 60 * 1000;

/** A stored request restored, with the browser session present when it was stored. */
export interface RestoredRequest {
  request: AuthorizationRequest;
  staleSessionHash: string | null;
}

/**
 * Stores the request while the user signs in or decides; returns the id the pages carry.
 * `staleSessionHash`: the browser session present when it was stored, or null. A session other than
 * that one was made by a sign-in after the request, which is what prompt=login and an exceeded
 * max_age ask for (signing in always starts a new session).
 */
export async function savePendingRequest(
  db: Kysely<Database>,
  ctx: Context,
  request: AuthorizationRequest,
  staleSessionHash: string | null,
): Promise<string> {
  const id = generateSecret('authorizationCode').slice(3);
  const now = ctx.clock.now();
  await insertAuthorizationRequest(db, {
    idHash: hashSecret(id),
    clientPk: request.client.id,
    redirectUri: request.redirectUri,
    scopes: request.scopes,
    state: request.state,
    nonce: request.nonce,
    codeChallenge: request.codeChallenge,
    prompt: [...request.prompt].join(' ') || null,
    maxAge: request.maxAge,
    requireMfa: request.requireMfa,
    staleSessionHash,
    at: now,
    expiresAt: new Date(now.getTime() + PENDING_REQUEST_TTL_MS),
  });
  return id;
}

function toAuthorizationRequest(pending: PendingRequest, client: Client): AuthorizationRequest {
  return {
    client,
    redirectUri: pending.redirectUri,
    scopes: normalizeScopes(pending.scopes),
    state: pending.state,
    nonce: pending.nonce,
    codeChallenge: pending.codeChallenge,
    prompt: new Set((pending.prompt ?? '').split(' ').filter(Boolean) as Prompt[]),
    maxAge: pending.maxAge,
    requireMfa: pending.requireMfa,
  };
}

/** Whether `id` can name a pending request (what the pages carry back). */
export function isPendingRequestId(id: unknown): id is string {
  return typeof id === 'string' && id.length <= 100;
}

/**
 * The pending request by its id, when it is neither used nor expired and may still go on
 * (`pendingStillAllowed`); undefined otherwise, and the request ends on an error page.
 */
export async function restorePendingRequest(
  db: Kysely<Database>,
  ctx: Context,
  id: unknown,
): Promise<RestoredRequest | undefined> {
  if (!isPendingRequestId(id)) return undefined;
  const pending = await findPendingRequest(db, hashSecret(id), ctx.clock.now());
  const client = pending ? await findClientById(db, pending.clientPk) : undefined;
  if (!pending || !client) return undefined;
  const request = toAuthorizationRequest(pending, client);
  if (!pendingStillAllowed(request)) return undefined;
  return { request, staleSessionHash: pending.staleSessionHash };
}

/**
 * Uses the pending request up, atomically: of two decisions on one request one wins, and a consent
 * cannot approve another request. Undefined when it was used or expired meanwhile.
 */
export async function usePendingRequest(
  db: Kysely<Database>,
  ctx: Context,
  id: string,
  client: Client,
): Promise<AuthorizationRequest | undefined> {
  const pending = await consumePendingRequest(db, hashSecret(id), ctx.clock.now());
  return pending && toAuthorizationRequest(pending, client);
}

/**
 * Whether the browser's session authenticates the user enough for this request (OIDC Core
 * §3.1.2.1): a session at all; with prompt=login, one made by a sign-in after the request; with
 * max_age, a sign-in at most that many seconds ago, or after the request. The authorize step, the
 * resumed request and the consent decision all ask this, so none can be skipped.
 */
export function sessionSatisfies(
  request: AuthorizationRequest,
  session: { idHash: string; authTime: Date } | null,
  pending: { staleSessionHash: string | null } | null,
  now: Date,
): boolean {
  if (session === null) return false;
  const signedInSince = pending !== null && session.idHash !== pending.staleSessionHash;
  if (request.prompt.has('login') && !signedInSince) return false;
  if (request.maxAge !== null && !signedInSince) {
    return now.getTime() - session.authTime.getTime() <= request.maxAge * 1000;
  }
  return true;
}

/**
 * Whether the request asked for a second factor (`acr_values=mfa`) that this session's sign-in did
 * not use: the user must pass one (or enrol one) before a code is issued.
 */
export function needsSecondFactor(
  request: AuthorizationRequest,
  session: { amr: readonly string[] },
): boolean {
  return request.requireMfa && !isMultiFactor(session.amr);
}

/**
 * Whether a stored request may still go on: its client is enabled, its redirect_uri still
 * registered, and the wallet scope, if asked for, still allowed (the client may have changed while
 * the user signed in or decided).
 */
export function pendingStillAllowed(request: AuthorizationRequest): boolean {
  const { client } = request;
  return (
    client.disabledAt === null &&
    redirectUriMatches(client.redirectUris, request.redirectUri) &&
    (!request.scopes.includes('wallet') || client.wallet)
  );
}
