import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidRequest } from '../../lib/errors.js';
import { open, seal } from '../../lib/sealed-secret.js';
import type { Client } from '../clients/client.js';
import { findClientByClientId } from '../clients/clients.repository.js';
import { type IdTokenHint, verifyIdTokenHint } from './id-token-hint.js';

// OpenID Connect RP-Initiated Logout 1.0: the parameters of the end_session
// endpoint, checked before anything happens. Every problem is an error page, never a redirect
// (§4: the OP must not redirect to an unverified post_logout_redirect_uri).

/** A logout request whose parameters passed every check. */
export interface LogoutRequest {
  /** The client that asks (its `client_id`, or the hint's audience), when known and enabled. */
  client: Client | null;
  /** Registered for `client` (exact match): where the browser goes afterwards. */
  postLogoutRedirectUri: string | null;
  /** Sent back with the redirect; kept only when there is a redirect. */
  state: string | null;
  /** The verified `id_token_hint`. */
  hint: IdTokenHint | null;
  /** The `ui_locales` as sent: the pages' preferred languages. */
  uiLocales: string | null;
}

/** What the browser session is, as far as the hint's match is concerned. */
export interface SessionFacts {
  userId: number;
  authTime: Date;
  sid: string;
}

/**
 * Whether the hint was issued in this very session (the user confirms unless it
 * was): the same user, the same sign-in (`auth_time`, in whole seconds as the id_token has it) and,
 * for an id_token that names one, the same session (`sid`; one the mobile app got names none).
 */
export function hintMatchesSession(hint: IdTokenHint, session: SessionFacts): boolean {
  return (
    hint.sub === String(session.userId) &&
    hint.authTime === Math.floor(session.authTime.getTime() / 1000) &&
    (hint.sid === null || hint.sid === session.sid)
  );
}

const MAX_PARAMETER_LENGTH = 2000;
const MAX_CLIENT_ID_LENGTH = 200;

/** A problem with the request: the error page (400), never a redirect. */
function refuse(description: string): never {
  throw new InvalidRequest(description, { redirectable: false });
}

/** One parameter: absent, or one string. A repeated one is refused (RFC 6749 §3.1, as at authorize). */
function single(params: Record<string, unknown>, name: string, maxLength = MAX_PARAMETER_LENGTH) {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') refuse(`The ${name} parameter must be sent once.`);
  if (value.length > maxLength) refuse(`The ${name} parameter is too long.`);
  return value;
}

async function enabledClient(db: Kysely<Database>, clientId: string): Promise<Client | null> {
  if (clientId.length > MAX_CLIENT_ID_LENGTH) return null;
  const client = await findClientByClientId(db, clientId);
  return client && client.disabledAt === null ? client : null;
}

/** §3: the redirect URI must be registered for the client, compared as an exact string. */
function checkRedirect(client: Client | null, uri: string | undefined): string | null {
  if (uri === undefined) return null;
  if (!client)
    refuse(
      'A post_logout_redirect_uri needs a client_id or an id_token_hint naming a registered application.',
    );
  if (!client.postLogoutRedirectUris.includes(uri))
    refuse('The post_logout_redirect_uri is not registered for this application.');
  return uri;
}

/**
 * Checks the parameters of `GET` or `POST /api/v1/oauth/logout` (OIDC RP-Initiated Logout 1.0 §2):
 * the hint verifies (an expired one too), a `client_id` names a registered application and is the
 * hint's audience, and a `post_logout_redirect_uri` is registered for that application.
 * `logout_hint` and unknown parameters are ignored.
 * @throws InvalidRequest (not redirectable) for any problem.
 */
export async function checkLogoutRequest(
  db: Kysely<Database>,
  ctx: Context,
  params: Record<string, unknown>,
): Promise<LogoutRequest> {
  for (const [name, value] of Object.entries(params)) {
    if (Array.isArray(value)) refuse(`The ${name} parameter must be sent once.`);
  }
  const token = single(params, 'id_token_hint', Number.POSITIVE_INFINITY);
  const clientId = single(params, 'client_id');
  const uri = single(params, 'post_logout_redirect_uri');
  const state = single(params, 'state');
  const uiLocales = single(params, 'ui_locales', 200);

  const hint = token === undefined ? null : await verifyIdTokenHint(db, ctx, token);
  if (token !== undefined && !hint)
    refuse('The id_token_hint is not a valid ID Token issued by this provider.');

  let client: Client | null = null;
  if (clientId !== undefined) {
    // §2: when both are sent, the client_id must be the hint's audience.
    if (hint && !hint.aud.includes(clientId))
      refuse('The client_id is not the audience of the id_token_hint.');
    client = await enabledClient(db, clientId);
    if (!client) refuse('The client_id is not a registered application.');
  } else if (hint && hint.aud.length === 1) {
    client = await enabledClient(db, hint.aud[0] as string);
  }
  const postLogoutRedirectUri = checkRedirect(client, uri);
  return {
    client,
    postLogoutRedirectUri,
    state: postLogoutRedirectUri === null ? null : (state ?? null),
    hint,
    uiLocales: uiLocales ?? null,
  };
}

/** Where the browser goes once logout is done: the registered URI with `state` (§3), or nowhere. */
export function postLogoutLocation(request: LogoutRequest): string | null {
  if (request.postLogoutRedirectUri === null) return null;
  const url = new URL(request.postLogoutRedirectUri);
  if (request.state !== null) url.searchParams.append('state', request.state);
  return url.toString();
}

/** How long a confirmation page's request stays valid (as a waiting authorization request). */
export const LOGOUT_REQUEST_TTL_MS = 30 * 60 * 1000;

const SEAL_PURPOSE = 'logout request';
/** Above any request the checks let through (escaped JSON of bounded parameters, then base64url). */
const MAX_SEALED_LENGTH = 65_536;

/** The sealed form of a request, for the confirmation page and the continuation of a POST. */
interface SealedLogoutRequest {
  client: string | null;
  uri: string | null;
  state: string | null;
  hint: IdTokenHint | null;
  uiLocales: string | null;
  expiresAt: number;
}

/**
 * A checked request, sealed (AES-GCM under a key derived from COOKIE_SECRET, lib/sealed-secret.ts)
 * so that the browser carries it to the next step and cannot change a word of it: no table to
 * keep, and the hint itself is not carried, only what it proved.
 */
export function sealLogoutRequest(ctx: Context, request: LogoutRequest): string {
  const sealed: SealedLogoutRequest = {
    client: request.client?.clientId ?? null,
    uri: request.postLogoutRedirectUri,
    state: request.state,
    hint: request.hint,
    uiLocales: request.uiLocales,
    expiresAt: ctx.clock.now().getTime() + LOGOUT_REQUEST_TTL_MS,
  };
  return seal(JSON.stringify(sealed), ctx.config.COOKIE_SECRET, SEAL_PURPOSE);
}

/**
 * The request a sealed value holds, checked again against the client as it is now (disabled, or
 * its post-logout URI removed since: refused); null when the value is not ours or has expired.
 * @throws InvalidRequest (not redirectable) when the client or its URI no longer qualifies.
 */
export async function openLogoutRequest(
  db: Kysely<Database>,
  ctx: Context,
  value: unknown,
): Promise<LogoutRequest | null> {
  if (typeof value !== 'string' || value.length > MAX_SEALED_LENGTH) return null;
  const secrets = [ctx.config.COOKIE_SECRET, ...ctx.config.COOKIE_SECRET_PREVIOUS];
  const plain = open(value, secrets, SEAL_PURPOSE);
  if (plain === null) return null;
  const sealed = JSON.parse(plain) as SealedLogoutRequest;
  if (sealed.expiresAt <= ctx.clock.now().getTime()) return null;
  const client = sealed.client === null ? null : await enabledClient(db, sealed.client);
  if (sealed.client !== null && !client && sealed.uri !== null)
    refuse('The application is no longer registered.');
  return {
    client,
    postLogoutRedirectUri: checkRedirect(client, sealed.uri ?? undefined),
    state: sealed.state,
    hint: sealed.hint,
    uiLocales: sealed.uiLocales,
  };
}
