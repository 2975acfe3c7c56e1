import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { MFA_ACR } from '../../../lib/amr.js';
import { ApiError, InvalidRequest, InvalidScope } from '../../../lib/errors.js';
import { isS256Challenge } from '../../../lib/pkce.js';
import { isCustomScheme, redirectUriMatches } from '../../../lib/redirect-uri.js';
import type { Client } from '../../clients/client.js';
import { findClientByClientId } from '../../clients/clients.repository.js';
import { ALL_SCOPES, DEFAULT_SCOPES, isScope, normalizeScopes } from '../scopes.js';
import { type AuthorizationRequest, AuthorizeRedirectError, type Prompt } from './request.js';

type Query = Record<string, unknown>;
type Fail = (error: ApiError) => never;
/** A check that may redirect: it reads the query and fills its part of the request, or fails. */
type Check = (query: Query, request: AuthorizationRequest, fail: Fail) => void;

const MAX_PARAMETER_LENGTH = 2000;

/** One query parameter: absent, or one string. A repeated parameter is refused (RFC 6749 §3.1). */
function single(query: Query, name: string, fail: Fail): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') fail(new InvalidRequest(`The ${name} parameter must be sent once.`));
  if (value.length > MAX_PARAMETER_LENGTH) fail(new InvalidRequest(`The ${name} parameter is too long.`));
  return value;
}

/** A client_id or redirect_uri problem: an error page, never a redirect (RFC 6749 §4.1.2.1). */
function pageError(description: string): never {
  throw new InvalidRequest(description, { redirectable: false });
}
const failPage: Fail = (error) => pageError(error.description);

/** client_id: present, registered, enabled. Until it is, nothing may redirect. */
export async function checkClient(db: Kysely<Database>, query: Query): Promise<Client> {
  const clientId = single(query, 'client_id', failPage);
  if (!clientId) pageError('The request has no client_id.');
  const client = clientId.length <= 200 ? await findClientByClientId(db, clientId) : undefined;
  if (!client || client.disabledAt !== null) pageError('The client_id is not a registered application.');
  return client;
}

/** A redirect_uri none of the client's: a page, which shows it beside the registered ones' hosts. */
export class UnregisteredRedirectUri extends InvalidRequest {
  constructor(
    readonly received: string,
    readonly registered: readonly string[],
  ) {
    super('The redirect_uri is not registered for this application.', {
      redirectable: false,
      receivedValues: { redirect_uri: received, registered_redirect_uris: registered },
    });
  }
}

/** redirect_uri: registered (exact match; a loopback port may differ, RFC 8252 §7.3). */
function checkRedirectUri(query: Query, client: Client): string {
  const redirectUri = single(query, 'redirect_uri', failPage);
  if (!redirectUri) pageError('The request has no redirect_uri.');
  if (!redirectUriMatches(client.redirectUris, redirectUri)) {
    throw new UnregisteredRedirectUri(redirectUri, client.redirectUris);
  }
  // docs/api.md, native applications: no custom scheme for a client whose site is an HTTPS address.
  const scheme = `${redirectUri.split(':', 1)[0]}:`;
  if (isCustomScheme(scheme) && client.siteUrl.startsWith('https:')) {
    pageError('A custom-scheme redirect is not supported for this application; use an https redirect.');
  }
  return redirectUri;
}

function noRepeatedParameters(query: Query, _request: AuthorizationRequest, fail: Fail): void {
  for (const value of Object.values(query)) {
    if (Array.isArray(value))
      fail(new InvalidRequest('Each parameter must be sent once (RFC 6749 section 3.1).'));
  }
}

function noRequestObjects(query: Query, _request: AuthorizationRequest, fail: Fail): void {
  if (query.request !== undefined)
    fail(new ApiError(400, 'request_not_supported', 'Request objects are not supported.'));
  // A request_uri of the PAR endpoint never gets here (pushed.service.ts); any other names a
  // request object by reference (OIDC Core §6.2).
  if (query.request_uri !== undefined) {
    fail(
      new ApiError(
        400,
        'request_uri_not_supported',
        'Only a request_uri from the pushed authorization request endpoint is supported.',
      ),
    );
  }
}

function responseType(query: Query, _request: AuthorizationRequest, fail: Fail): void {
  const value = single(query, 'response_type', fail);
  if (!value) fail(new InvalidRequest('response_type is required; use response_type=code.'));
  if (value !== 'code') {
    fail(new ApiError(400, 'unsupported_response_type', 'Only response_type=code is supported.'));
  }
  const responseMode = single(query, 'response_mode', fail);
  if (responseMode !== undefined && responseMode !== 'query') {
    fail(new InvalidRequest('Only response_mode=query is supported.'));
  }
}

function state(query: Query, request: AuthorizationRequest, fail: Fail): void {
  const value = single(query, 'state', fail);
  if (!value) fail(new InvalidRequest('state is required: send a random value and compare it on return.'));
  request.state = value;
}

function scope(query: Query, request: AuthorizationRequest, fail: Fail): void {
  const value = single(query, 'scope', fail);
  const requested = value === undefined ? [...DEFAULT_SCOPES] : value.split(' ').filter(Boolean);
  if (requested.length === 0) fail(new InvalidScope('scope is empty.'));
  const unknown = requested.filter((name) => !isScope(name));
  if (unknown.length > 0)
    fail(new InvalidScope(`scope has an unknown value; the scopes are: ${ALL_SCOPES.join(' ')}.`));
  if (requested.includes('wallet') && !request.client.wallet) {
    fail(new InvalidScope('This application may not request the wallet scope.'));
  }
  request.scopes = normalizeScopes(requested);
}

function pkce(query: Query, request: AuthorizationRequest, fail: Fail): void {
  const challenge = single(query, 'code_challenge', fail);
  const method = single(query, 'code_challenge_method', fail);
  if (method !== undefined && challenge === undefined) {
    fail(new InvalidRequest('code_challenge_method was sent without a code_challenge.'));
  }
  if (challenge !== undefined) {
    if (method !== 'S256')
      fail(new InvalidRequest('code_challenge_method must be S256 (plain is not supported).'));
    if (!isS256Challenge(challenge)) {
      fail(
        new InvalidRequest(
          'code_challenge must be the base64url SHA-256 of the code_verifier (43 characters).',
        ),
      );
    }
  }
  // RFC 9700 §2.1.1: a public client has no secret, so PKCE is what protects its code.
  if (challenge === undefined && request.client.isPublic) {
    fail(new InvalidRequest('code_challenge is required: a public client must use PKCE (S256).'));
  }
  request.codeChallenge = challenge ?? null;
}

function nonce(query: Query, request: AuthorizationRequest, fail: Fail): void {
  request.nonce = single(query, 'nonce', fail) ?? null;
}

function prompt(query: Query, request: AuthorizationRequest, fail: Fail): void {
  for (const value of (single(query, 'prompt', fail) ?? '').split(' ').filter(Boolean)) {
    if (value !== 'none' && value !== 'login' && value !== 'consent') {
      fail(new InvalidRequest('prompt must be none, login or consent.'));
    }
    request.prompt.add(value as Prompt);
  }
  if (request.prompt.has('none') && request.prompt.size > 1) {
    fail(new InvalidRequest('prompt=none cannot be combined.'));
  }
}

function maxAge(query: Query, request: AuthorizationRequest, fail: Fail): void {
  const value = single(query, 'max_age', fail);
  if (value !== undefined && !/^\d{1,9}$/.test(value)) {
    fail(new InvalidRequest('max_age must be a whole number of seconds.'));
  }
  request.maxAge = value === undefined ? null : Number(value);
}

function acrValues(query: Query, request: AuthorizationRequest, fail: Fail): void {
  // OIDC Core §3.1.2.1: space-separated, in order of preference; `mfa` is the only class asserted
  //, and a value the service does not know is no reason to refuse the request.
  const values = (single(query, 'acr_values', fail) ?? '').split(' ');
  request.requireMfa = values.includes(MFA_ACR);
}

/**
 * The checks that answer by a redirect, in order (after node-oidc-provider's
 * lib/actions/authorization/); the client and its redirect_uri were checked before them.
 */
const CHECKS: readonly Check[] = [
  noRepeatedParameters, // RFC 6749 §3.1: no parameter may be sent twice
  noRequestObjects, // OIDC Core §6: request objects are not supported, nor by reference
  responseType, // RFC 6749 §3.1.1: the code flow only, answered in the query
  state, // docs/oauth.md: state is required
  scope, // docs/api.md: known scopes only; wallet only for clients with the right
  pkce, // RFC 7636 §4.3, RFC 9700 §2.1.1: S256 only
  nonce, // OIDC Core §3.1.2.1: echoed in the id_token
  prompt, // OIDC Core §3.1.2.1: none, login, consent; none stands alone
  maxAge, // OIDC Core §3.1.2.1: whole seconds since the last sign-in
  acrValues, // OIDC Core §3.1.2.1, docs/pages.md: acr_values=mfa requires a second factor
];

/**
 * The authorize parameters the checks read, besides client_id: what a pushed request keeps
 * (RFC 9126 §2.1). A check reading a new parameter lists it here, or PAR would drop it.
 */
export const AUTHORIZE_PARAMETERS = [
  'redirect_uri',
  'response_type',
  'response_mode',
  'state',
  'scope',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'prompt',
  'max_age',
  'acr_values',
] as const;

/** How the problems after the redirect_uri check are answered. */
type Answer = 'redirect' | 'throw';

/**
 * The checks after the client's: its redirect_uri, then CHECKS. `answer`: redirect the problems
 * (RFC 6749 §4.1.2.1) or throw their `ApiError` (the PAR endpoint's JSON, RFC 9126 §2.3).
 * `pushed`: the parameters came through PAR.
 */
function checkRequestOf(client: Client, query: Query, answer: Answer, pushed: boolean): AuthorizationRequest {
  const redirectUri = checkRedirectUri(query, client); // RFC 6749 §3.1.2.3, RFC 8252 §7.3: registered
  const rawState = typeof query.state === 'string' ? query.state : undefined;
  const fail: Fail = (error) => {
    throw answer === 'throw' ? error : new AuthorizeRedirectError(error, redirectUri, rawState);
  };
  // RFC 9126 §6: a client registered with require_pushed_authorization_requests sends no other kind.
  if (client.requirePar && !pushed) {
    fail(
      new InvalidRequest(
        'This application must use pushed authorization requests (RFC 9126): POST the parameters to the pushed_authorization_request_endpoint, then send only client_id and request_uri here.',
      ),
    );
  }
  const request: AuthorizationRequest = {
    client,
    redirectUri,
    scopes: [],
    state: '',
    nonce: null,
    codeChallenge: null,
    prompt: new Set(),
    maxAge: null,
    requireMfa: false,
  };
  for (const check of CHECKS) check(query, request, fail);
  return request;
}

/**
 * Checks an authorize request sent in the query. A client_id or redirect_uri problem throws an
 * `ApiError` that is not redirectable; every later problem an `AuthorizeRedirectError`.
 * `identified` is called once the client is known, before its request is checked.
 */
export async function checkAuthorizeRequest(
  db: Kysely<Database>,
  query: Query,
  identified?: (client: Client) => void,
): Promise<AuthorizationRequest> {
  const client = await checkClient(db, query); // RFC 6749 §4.1.2.1: no redirect before the client is known
  identified?.(client);
  return checkRequestOf(client, query, 'redirect', false);
}

/**
 * Checks the parameters a client pushed (RFC 9126 §2.1) with the checks of the authorization
 * endpoint. Every problem, a redirect_uri one included, throws its `ApiError`, which the PAR
 * endpoint answers as JSON (RFC 9126 §2.3).
 */
export function checkPushedParameters(client: Client, params: Query): AuthorizationRequest {
  return checkRequestOf(client, params, 'throw', true);
}

/**
 * Checks a pushed request again when the browser brings its request_uri, since the client may have
 * changed meanwhile: a redirect_uri no longer registered throws a non-redirectable `ApiError`,
 * every later problem an `AuthorizeRedirectError`.
 */
export function recheckPushedParameters(client: Client, params: Query): AuthorizationRequest {
  return checkRequestOf(client, params, 'redirect', true);
}
