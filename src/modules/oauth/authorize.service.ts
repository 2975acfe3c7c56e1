import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { ApiError, InvalidRequest, InvalidScope } from '../../lib/errors.js';
import { isS256Challenge } from '../../lib/pkce.js';
import { isCustomScheme, redirectUriMatches } from '../../lib/redirect-uri.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import type { ClientRow } from '../clients/clients.repository.js';
import { findClientByClientId } from '../clients/clients.repository.js';
import { findConsent, saveConsent } from './consents.repository.js';
import {
  type AuthorizationRequestRow,
  insertAuthorizationCode,
  insertAuthorizationRequest,
} from './oauth.repository.js';
import { ALL_SCOPES, DEFAULT_SCOPES, isScope, normalizeScopes, type Scope } from './scopes.js';

/** SPEC.md: a code is valid for about 10 minutes. */
export const AUTHORIZATION_CODE_TTL_MS = 10 * 60 * 1000;
/** How long a user may take to sign in and decide on the consent page. */
export const PENDING_REQUEST_TTL_MS = 30 * 60 * 1000;

export type Prompt = 'none' | 'login' | 'consent';

/** An authorize request that passed every check. */
export interface AuthorizationRequest {
  client: ClientRow;
  redirectUri: string;
  scopes: Scope[];
  state: string;
  nonce: string | null;
  codeChallenge: string | null;
  prompt: Set<Prompt>;
  /** OIDC Core §3.1.2.1: the longest time since the user last signed in, in seconds; null for any. */
  maxAge: number | null;
}

/**
 * An error to send back to the client's redirect_uri (RFC 6749 §4.1.2.1, RFC 9207), once the
 * client and its redirect_uri are known to be genuine.
 */
export class AuthorizeRedirectError extends Error {
  constructor(
    readonly apiError: ApiError,
    readonly redirectUri: string,
    readonly state: string | undefined,
  ) {
    super(apiError.description);
  }
}

const MAX_PARAMETER_LENGTH = 2000;

/** One query parameter: absent, or one string. A repeated parameter is refused (RFC 6749 §3.1). */
function single(
  query: Record<string, unknown>,
  name: string,
  onError: (error: ApiError) => never,
): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') onError(new InvalidRequest(`The ${name} parameter must be sent once.`));
  if (value.length > MAX_PARAMETER_LENGTH) onError(new InvalidRequest(`The ${name} parameter is too long.`));
  return value;
}

/** A client_id or redirect_uri problem: an error page, never a redirect (RFC 6749 §4.1.2.1). */
function pageError(description: string): never {
  throw new InvalidRequest(description, { redirectable: false });
}

/**
 * The ordered checks of an authorize request (after node-oidc-provider's
 * lib/actions/authorization/), each naming the rule it enforces.
 */
export async function checkAuthorizeRequest(
  db: Kysely<Database>,
  query: Record<string, unknown>,
): Promise<AuthorizationRequest> {
  const failPage: (error: ApiError) => never = (error) => pageError(error.description);

  // 1. client_id: present, registered, enabled. Until it is, nothing may redirect.
  const clientId = single(query, 'client_id', failPage);
  if (!clientId) pageError('The request has no client_id.');
  const client = clientId.length <= 200 ? await findClientByClientId(db, clientId) : undefined;
  if (!client || client.disabled_at !== null) pageError('The client_id is not a registered application.');

  // 2. redirect_uri: present and registered (exact match; loopback port may differ, RFC 8252 §7.3).
  const redirectUri = single(query, 'redirect_uri', failPage);
  if (!redirectUri) pageError('The request has no redirect_uri.');
  if (!redirectUriMatches(client.redirect_uris, redirectUri)) {
    pageError('The redirect_uri is not registered for this application.');
  }
  // SPEC.md, native applications: no custom scheme for a client whose site is an HTTPS address.
  const scheme = `${redirectUri.split(':', 1)[0]}:`;
  if (isCustomScheme(scheme) && client.site_url.startsWith('https:')) {
    pageError('A custom-scheme redirect is not supported for this application; use an https redirect.');
  }

  // From here on, errors go back to the client.
  const rawState = typeof query.state === 'string' ? query.state : undefined;
  const fail: (error: ApiError) => never = (error) => {
    throw new AuthorizeRedirectError(error, redirectUri, rawState);
  };

  // 3. No repeated parameters at all (RFC 6749 §3.1).
  for (const value of Object.values(query)) {
    if (Array.isArray(value))
      fail(new InvalidRequest('Each parameter must be sent once (RFC 6749 section 3.1).'));
  }

  // 4. OpenID Connect request objects are not supported (OIDC Core §6).
  if (query.request !== undefined)
    fail(new ApiError(400, 'request_not_supported', 'Request objects are not supported.'));
  if (query.request_uri !== undefined) {
    fail(new ApiError(400, 'request_uri_not_supported', 'request_uri is not supported.'));
  }

  // 5. response_type: the authorization code flow only.
  const responseType = single(query, 'response_type', fail);
  if (!responseType) fail(new InvalidRequest('response_type is required; use response_type=code.'));
  if (responseType !== 'code') {
    fail(new ApiError(400, 'unsupported_response_type', 'Only response_type=code is supported.'));
  }
  const responseMode = single(query, 'response_mode', fail);
  if (responseMode !== undefined && responseMode !== 'query') {
    fail(new InvalidRequest('Only response_mode=query is supported.'));
  }

  // 6. state: required (CONTRACT.md §5), so every response can be tied to the client's request.
  const state = single(query, 'state', fail);
  if (!state) fail(new InvalidRequest('state is required: send a random value and compare it on return.'));

  // 7. scope: known scopes only; `wallet` only for clients holding the wallet right.
  const scopeParam = single(query, 'scope', fail);
  const requested = scopeParam === undefined ? [...DEFAULT_SCOPES] : scopeParam.split(' ').filter(Boolean);
  if (requested.length === 0) fail(new InvalidScope('scope is empty.'));
  const unknown = requested.filter((scope) => !isScope(scope));
  if (unknown.length > 0)
    fail(new InvalidScope(`scope has an unknown value; the scopes are: ${ALL_SCOPES.join(' ')}.`));
  if (requested.includes('wallet') && !client.wallet) {
    fail(new InvalidScope('This application may not request the wallet scope.'));
  }
  const scopes = normalizeScopes(requested);

  // 8. PKCE (RFC 7636): S256 only; `plain` and a challenge without a method are refused.
  const codeChallenge = single(query, 'code_challenge', fail);
  const method = single(query, 'code_challenge_method', fail);
  if (method !== undefined && codeChallenge === undefined) {
    fail(new InvalidRequest('code_challenge_method was sent without a code_challenge.'));
  }
  if (codeChallenge !== undefined) {
    if (method !== 'S256')
      fail(new InvalidRequest('code_challenge_method must be S256 (plain is not supported).'));
    if (!isS256Challenge(codeChallenge)) {
      fail(
        new InvalidRequest(
          'code_challenge must be the base64url SHA-256 of the code_verifier (43 characters).',
        ),
      );
    }
  }

  // 9. nonce (OIDC Core §3.1.2.1): echoed in the id_token.
  const nonce = single(query, 'nonce', fail);

  // 10. prompt (OIDC Core §3.1.2.1): none, login, consent; `none` stands alone.
  const promptParam = single(query, 'prompt', fail);
  const prompt = new Set<Prompt>();
  for (const value of (promptParam ?? '').split(' ').filter(Boolean)) {
    if (value !== 'none' && value !== 'login' && value !== 'consent') {
      fail(new InvalidRequest('prompt must be none, login or consent.'));
    }
    prompt.add(value);
  }
  if (prompt.has('none') && prompt.size > 1) fail(new InvalidRequest('prompt=none cannot be combined.'));

  // 11. max_age (OIDC Core §3.1.2.1): seconds since the last sign-in, 0 meaning "sign in again".
  const maxAgeParam = single(query, 'max_age', fail);
  if (maxAgeParam !== undefined && !/^\d{1,9}$/.test(maxAgeParam)) {
    fail(new InvalidRequest('max_age must be a whole number of seconds.'));
  }

  return {
    client,
    redirectUri,
    scopes,
    state,
    nonce: nonce ?? null,
    codeChallenge: codeChallenge ?? null,
    prompt,
    maxAge: maxAgeParam === undefined ? null : Number(maxAgeParam),
  };
}

/** The redirect back to the client with the given parameters, and `iss` (RFC 9207). */
export function redirectBack(
  redirectUri: string,
  issuer: string,
  params: Record<string, string | undefined>,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.append(name, value);
  url.searchParams.append('iss', issuer);
  return url.toString();
}

export function errorRedirect(error: AuthorizeRedirectError, issuer: string): string {
  return redirectBack(error.redirectUri, issuer, {
    error: error.apiError.error,
    error_description: error.apiError.description,
    state: error.state,
  });
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
    id_hash: hashSecret(id),
    client_pk: request.client.id,
    redirect_uri: request.redirectUri,
    scopes: request.scopes,
    state: request.state,
    nonce: request.nonce,
    code_challenge: request.codeChallenge,
    prompt: [...request.prompt].join(' ') || null,
    max_age: request.maxAge,
    stale_session_hash: staleSessionHash,
    created_at: now,
    expires_at: new Date(now.getTime() + PENDING_REQUEST_TTL_MS),
  });
  return id;
}

/** A pending request as the checks produced it, for the steps after sign-in. */
export function fromPendingRow(row: AuthorizationRequestRow, client: ClientRow): AuthorizationRequest {
  return {
    client,
    redirectUri: row.redirect_uri,
    scopes: normalizeScopes(row.scopes),
    state: row.state,
    nonce: row.nonce,
    codeChallenge: row.code_challenge,
    prompt: new Set((row.prompt ?? '').split(' ').filter(Boolean) as Prompt[]),
    maxAge: row.max_age,
  };
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
 * Whether a stored request may still go on: its client is enabled, its redirect_uri still
 * registered, and the wallet scope, if asked for, still allowed (the client may have changed while
 * the user signed in or decided). Otherwise the request ends on an error page.
 */
export function pendingStillAllowed(request: AuthorizationRequest): boolean {
  const { client } = request;
  return (
    client.disabled_at === null &&
    redirectUriMatches(client.redirect_uris, request.redirectUri) &&
    (!request.scopes.includes('wallet') || client.wallet)
  );
}

/** Whether the user already allowed this client every requested scope. */
export async function consentCovers(
  db: Kysely<Database>,
  userId: number,
  request: AuthorizationRequest,
): Promise<boolean> {
  const consent = await findConsent(db, userId, request.client.id);
  return consent !== undefined && request.scopes.every((scope) => consent.scopes.includes(scope));
}

/**
 * Issues a one-time code for the granted scopes and returns the redirect carrying it.
 * Remembers the consent when `remember` is given (the user just clicked Allow).
 */
export async function issueCode(
  db: Kysely<Database>,
  ctx: Context,
  request: AuthorizationRequest,
  grant: { userId: number; authTime: Date; scopes: Scope[]; remember?: { withheld: Scope[] } },
): Promise<string> {
  const code = generateSecret('authorizationCode');
  const now = ctx.clock.now();
  await db.transaction().execute(async (trx) => {
    if (grant.remember) {
      const previous = await findConsent(trx, grant.userId, request.client.id);
      const remembered = normalizeScopes([...(previous?.scopes ?? []), ...grant.scopes]).filter(
        (scope) => !grant.remember?.withheld.includes(scope),
      );
      await saveConsent(trx, {
        userId: grant.userId,
        clientPk: request.client.id,
        scopes: remembered,
        at: now,
      });
    }
    await insertAuthorizationCode(trx, {
      code_hash: hashSecret(code),
      client_pk: request.client.id,
      user_id: grant.userId,
      redirect_uri: request.redirectUri,
      scopes: grant.scopes,
      code_challenge: request.codeChallenge,
      nonce: request.nonce,
      auth_time: grant.authTime,
      created_at: now,
      expires_at: new Date(now.getTime() + AUTHORIZATION_CODE_TTL_MS),
    });
  });
  return redirectBack(request.redirectUri, ctx.config.PUBLIC_URL, { code, state: request.state });
}
