import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import type { ApiError } from '../../lib/errors.js';
import { insertRefusal, listRefusals, REFUSALS_KEPT, type RefusalRow } from './refusals.repository.js';

export type { RefusalRow } from './refusals.repository.js';

/** The endpoints whose refusals an application's owners see. */
export type RefusalEndpoint =
  | 'authorize'
  | 'par'
  | 'token'
  | 'revocation'
  | 'introspection'
  | 'device_authorization';

/**
 * Answers that are not the application's mistake, so not in its log: the user's own decision or
 * state (RFC 6749 §4.1.2.1 access_denied; OIDC Core §3.1.2.6; RFC 8628 §3.5), a DPoP nonce the client is expected
 * to fetch and retry with (RFC 9449 §8), and the service's own trouble or rate limit.
 */
const NOT_REFUSALS: ReadonlySet<string> = new Set([
  'access_denied',
  'login_required',
  'consent_required',
  'interaction_required',
  'use_dpop_nonce',
  // RFC 8628 §3.5: a device waiting for its person, or told that it took too long.
  'authorization_pending',
  'expired_token',
  'rate_limited',
  'server_error',
  'unavailable',
]);

/** Whether an error answer goes into the application's log. */
export function isLoggedRefusal(error: ApiError): boolean {
  return error.status < 500 && !NOT_REFUSALS.has(error.error);
}

/**
 * The parameters an application's owners see of a refused request, by endpoint: what the reasons
 * are about, never one that carries a secret, a code or a token (client_secret, code,
 * code_verifier, refresh_token, token, request_uri, state, nonce are not here).
 */
const SHOWN_PARAMETERS: Readonly<Record<RefusalEndpoint, readonly string[]>> = {
  authorize: [
    'redirect_uri',
    'response_type',
    'response_mode',
    'scope',
    'code_challenge',
    'code_challenge_method',
    'prompt',
    'max_age',
    'acr_values',
  ],
  par: [
    'redirect_uri',
    'response_type',
    'response_mode',
    'scope',
    'code_challenge',
    'code_challenge_method',
    'prompt',
    'max_age',
    'acr_values',
  ],
  token: ['grant_type', 'redirect_uri', 'scope'],
  revocation: ['token_type_hint'],
  introspection: ['token_type_hint'],
  device_authorization: ['scope'],
};

/** A value is shown up to this length; a list up to MAX_LIST_ITEMS of them. */
export const MAX_VALUE_LENGTH = 500;
const MAX_LIST_ITEMS = 10;

/**
 * A value cut at MAX_VALUE_LENGTH, which may fall inside a surrogate pair: the lone half left is
 * replaced (U+FFFD), since PostgreSQL refuses one in jsonb and the row would be lost. (NUL and
 * lone surrogates sent by the caller are refused before any route: src/http/input-guard.ts.)
 */
function cut(text: string): string {
  return text.length > MAX_VALUE_LENGTH ? `${text.slice(0, MAX_VALUE_LENGTH).toWellFormed()}…` : text;
}

function bounded(value: unknown): string | string[] | undefined {
  if (typeof value === 'string') return cut(value);
  if (Array.isArray(value)) {
    return value
      .slice(0, MAX_LIST_ITEMS)
      .map((each) => bounded(typeof each === 'string' ? each : String(each)) as string);
  }
  return undefined;
}

/** What a refused request sent to a client endpoint, as the owners' log keeps it. */
export interface RequestSeen {
  endpoint: RefusalEndpoint;
  clientId: string;
  /** The request's parameters (the query at authorize, the form elsewhere). */
  params: Readonly<Record<string, unknown>>;
  /** How the client authenticated, at the endpoints where it does (RFC 6749 §2.3.1). */
  clientAuthentication?: 'client_secret_basic' | 'client_secret_post' | 'none';
}

/**
 * The reason shown for an invalid_client of a known application: it told the caller less, since
 * a stranger must not learn whether the client exists (RFC 6749 §5.2).
 */
const WRONG_SECRET =
  'The client secret is wrong, expired or revoked (a public client sends none): use an active secret of this application.';

/**
 * The reasons of the authorize refusals answered by a page of our own, whose description is only
 * the page's kind (src/web/error-pages.ts). Who tried is not said, as the page does not say it.
 */
const PAGE_REASONS: Readonly<Record<string, string>> = {
  app_awaits_review:
    "The application awaits an operator's review: until it is approved, only its owners and co-owners can sign in through it.",
};

/** The log's row of a refused request: the error, its reason, and the values it is about. */
export function describeRefusal(seen: RequestSeen, error: ApiError, at: Date) {
  const received: Record<string, string | string[]> = {};
  for (const name of SHOWN_PARAMETERS[seen.endpoint]) {
    const value = bounded(seen.params[name]);
    if (value !== undefined) received[name] = value;
  }
  if (seen.clientAuthentication) received.client_authentication = seen.clientAuthentication;
  for (const [name, value] of Object.entries(error.receivedValues ?? {})) {
    const shown = bounded(value);
    if (shown !== undefined) received[name] = shown;
  }
  const reason =
    (Object.hasOwn(PAGE_REASONS, error.error) ? PAGE_REASONS[error.error] : undefined) ??
    (error.error === 'invalid_client' &&
    seen.clientAuthentication !== 'none' &&
    /wrong client secret/i.test(error.description)
      ? WRONG_SECRET
      : error.description);
  return { clientId: seen.clientId, at, endpoint: seen.endpoint, error: error.error, reason, received };
}

/**
 * Writes a refused request into its application's log (when `clientId` is an application's),
 * keeping the latest REFUSALS_KEPT. Returns whether it was written. Called after the answer is
 * sent (src/modules/client-activity/refusal-hook.ts), whose runner logs a failure by name only.
 */
export async function recordRefusal(
  db: Kysely<Database>,
  _ctx: Context,
  seen: RequestSeen,
  error: ApiError,
  at: Date,
): Promise<boolean> {
  return insertRefusal(db, describeRefusal(seen, error, at));
}

/** The latest refused requests of an application (at most REFUSALS_KEPT), newest first. */
export function recentRefusals(
  db: Kysely<Database>,
  clientPk: number,
  limit: number = REFUSALS_KEPT,
): Promise<RefusalRow[]> {
  return listRefusals(db, clientPk, Math.max(0, Math.min(limit, REFUSALS_KEPT)));
}
