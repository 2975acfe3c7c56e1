import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnedApp } from '../../src/modules/developer-apps/apps.service.js';
import { createRegistrationToken } from '../../src/modules/developer-apps/registration-tokens.service.js';
import { addProvider } from '../../src/modules/upstream/providers.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeOperator, nextCode, type TestOperator } from '../helpers/console.js';
import {
  depsOf,
  makeClient,
  makeOfficialApp,
  makeUser,
  mintCode,
  type TestClient,
} from '../helpers/factories.js';
import { hiddenFields } from '../helpers/html.js';
import { basic, exchangeCode } from '../helpers/http.js';
import { type OidcStandIn, startOidcStandIn } from '../helpers/upstream/oidc-standin.js';

/**
 * Every route of the catalogue, driven with generated requests: NUL, lone surrogates, invalid
 * UTF-8 in percent-encodings, very long strings, odd numbers, odd content types, repeated
 * parameters, with and without valid credentials. Whatever comes in, the answer is never a 5xx;
 * an error is in the contract's shape (JSON routes) or the error page (browser routes); OAuth error
 * texts stay within the characters RFC 6749 §5.2 allows; and the service is healthy afterwards.
 * The browser routes of a signed-in user (account, security, passkeys, logout, PAR, and whatever
 * the catalogue adds) are favoured, and half of the generated requests carry the session of a
 * signed-in browser, kept alive: a request that ends or changes it (a sign-out, a new session id) is
 * followed by a fresh sign-in, so later requests still reach past the session and CSRF checks.
 * That browser is a console owner's, inside the console (entered with a code), so the console's
 * routes are walked with an operator's session and without one.
 *
 * FUZZ_SEED=<n> replays a run (the seed is printed first); FUZZ_RUNS=<n> changes its length.
 */
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);

interface CatalogueRoute {
  method: string;
  path: string;
  auth: string;
  description: string;
}

/**
 * Browser routes that a page script calls with JSON, and that answer errors in JSON (the passkey
 * ceremonies); and the landing page, a page only when `Accept` prefers HTML, which no generated
 * request sends.
 */
function answersPages(route: CatalogueRoute): boolean {
  return route.auth === 'browser' && !route.description.includes('(JSON') && route.path !== '/';
}

/** What a generated request may carry, and the valid credentials it may borrow. */
interface Credentials {
  client: TestClient;
  mobileClientId: string;
  accessToken: string;
  walletToken: string;
  refreshToken: string;
  idToken: string;
  /** The signed-in browser's cookies (session and CSRF) and the CSRF token of its forms. */
  cookie: string;
  csrfToken: string;
  /** An application the signed-in account owns in the developer portal. */
  portalClientId: string;
  /** Who that browser is signed in as (a baseline may send the password to re-authenticate). */
  username: string;
  password: string;
  /** The same account as a console owner, with its authenticator app's key. */
  operator: TestOperator;
  /** An operator's RFC 7591 initial access token of many uses. */
  initialAccessToken: string;
  /** A client it registered, with its RFC 7592 registration access token (registered again once deleted). */
  registered: { clientId: string; accessToken: string };
}

/**
 * The route families a signed-in browser uses, which the run must reach with a live session and a
 * valid CSRF token and without one; a route of the catalogue in none of them is still walked.
 */
const SESSION_FAMILIES: ReadonlyArray<readonly [string, (path: string) => boolean]> = [
  ['security', (path) => path.startsWith('/account/security')],
  ['passkeys', (path) => path.startsWith('/account/passkeys') || path.startsWith('/signin/passkey')],
  ['account', (path) => path.startsWith('/account')],
  ['logout', (path) => path.startsWith('/api/v1/oauth/logout') || path === '/signout'],
  ['par', (path) => path === '/api/v1/oauth/par'],
  ['console', (path) => path.startsWith('/admin')],
  ['developers', (path) => path.startsWith('/developers')],
  // Sign-in through a provider (configured, its stand-in up): the start, the callback (forged,
  // replayed, huge states and codes), the username and link pages.
  ['providers', (path) => path.startsWith('/signin/providers')],
  // RFC 8628's page: a code typed, allowed or denied.
  ['device', (path) => path.startsWith('/device')],
];

/** Other routes a signed-in browser reaches, favoured as the families are. */
const SESSION_ROUTES = ['/signin', '/signin/second-factor', '/api/v1/oauth/authorize/decision'];

function familyOf(path: string): string | undefined {
  return SESSION_FAMILIES.find(([, matches]) => matches(path))?.[0];
}

let t: TestApp;
let upstream: OidcStandIn;
let routes: CatalogueRoute[];
let credentials: Credentials;
/** The signed-in browser's cookies, as a browser keeps them from the answers it gets. */
let jar = new Map<string, string>();
/** Set when a request may have ended or changed the session: it is checked before the next use. */
let sessionDirty = false;
/** How often the run signed in again because a generated request ended the session. */
let freshSignIns = 0;

/** The credentials client's registered return address after logout (RP-Initiated Logout §2). */
const POST_LOGOUT_REDIRECT_URI = 'https://site.example/signed-out';

/** Parameter names of every route, so generated requests reach past "missing parameter" checks. */
const PARAMETER_NAMES = [
  'client_id',
  'redirect_uri',
  'response_type',
  'state',
  'scope',
  'nonce',
  'prompt',
  'max_age',
  'code_challenge',
  'code_challenge_method',
  'response_mode',
  'request',
  'request_uri',
  'grant_type',
  'code',
  'code_verifier',
  'refresh_token',
  'token',
  'token_type_hint',
  'client_secret',
  'csrf_token',
  'username',
  'password',
  'email',
  'decision',
  'share_email',
  'return_to',
  'lang',
  'notice',
  'device',
  'device_id',
  'challenge',
  'signature',
  'public_key',
  'q',
  'limit',
  'cursor',
  'amount',
  'currency',
  'description',
  'idempotency_key',
  'login',
  'id_token_hint',
  'post_logout_redirect_uri',
  // The developer portal's forms.
  'site_url',
  'redirect_uris',
  'kind',
  'confirm_name',
  'secret_id',
  'expires_in',
  'in',
  'uses',
  'token_id',
  'user_id',
];

const hostile = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ufdfa'.repeat(2000),
  'a'.repeat(70_000),
  '%',
  '%00',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  "' or 1=1 --",
  '"\\\b\f\n\r\t',
  '‹é§–',
  'http://127.0.0.1:99999/cb',
  'https://site.example/callback',
  'urn:ietf:params:oauth:request_uri:x',
  'openid profile email verified offline_access wallet',
  'authorization_code',
  'refresh_token',
  'S256',
  'allow',
  'deny',
  'COIN',
  'login consent none',
  '-1',
  '0',
  '1e309',
  '99999999999999999999999',
  'NaN',
  '',
  ' ',
  // Replaced by the real values at sending time (see `real`), to get past the first checks.
  '$client_id',
  '$portal_client_id',
  '$mobile_client_id',
  '$redirect_uri',
  '$access_token',
  '$refresh_token',
  '$id_token',
  '$registered_client_id',
  'device-12345678',
  // The configured provider's name, for `/signin/providers/:name/…`.
  'oidc',
  'urn:ietf:params:oauth:grant-type:device_code',
  'BCDF-GHJK',
);

const numbers = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, 1e-7, 0.001, 1_000_000_000.01, Number.MAX_SAFE_INTEGER + 2, 2 ** 64),
);

/** Strings of every kind: any code point (lone surrogates included), ASCII, hostile constants. */
const anyString = fc.oneof(
  { weight: 3, arbitrary: hostile },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }) },
);

/** A value in a JSON body: strings, numbers, and the wrong types. */
const jsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: anyString },
  { weight: 2, arbitrary: numbers },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
  { weight: 1, arbitrary: fc.array(anyString, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 5 }), anyString, { maxKeys: 2 }) },
);

/**
 * Percent-encodes any JavaScript string, lone surrogates included: those become the three bytes
 * of their code unit (invalid UTF-8), as a hostile client would send them.
 */
function percentEncode(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const isHigh = unit >= 0xd800 && unit <= 0xdbff;
    const next = value.charCodeAt(i + 1);
    if (isHigh && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(value.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += `%${(0xe0 | (unit >> 12)).toString(16)}%${(0x80 | ((unit >> 6) & 0x3f)).toString(16)}%${(0x80 | (unit & 0x3f)).toString(16)}`;
    } else {
      out += encodeURIComponent(value[i] as string);
    }
  }
  return out;
}

/** Name/value pairs: known names mostly, sometimes a name twice (a repeated parameter). */
const pairs = fc.array(
  fc.tuple(
    fc.oneof(
      { weight: 9, arbitrary: fc.constantFrom(...PARAMETER_NAMES) },
      { weight: 1, arbitrary: anyString },
    ),
    fc.oneof(anyString, numbers.map(String)),
  ),
  { maxLength: 8 },
);

const encodePairs = (list: Array<[string, string]>) =>
  list.map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`).join('&');

type Body =
  | { kind: 'none' }
  | { kind: 'form'; pairs: Array<[string, string]> }
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; contentType: string; payload: string };

const body: fc.Arbitrary<Body> = fc.oneof(
  fc.constant<Body>({ kind: 'none' }),
  pairs.map<Body>((list) => ({ kind: 'form', pairs: list })),
  fc
    .oneof(fc.dictionary(fc.constantFrom(...PARAMETER_NAMES), jsonValue, { maxKeys: 8 }), jsonValue)
    .map<Body>((value) => ({ kind: 'json', value })),
  fc
    .tuple(
      fc.constantFrom(
        'text/plain',
        'application/json',
        'application/json; charset=latin1',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/octet-stream',
        '*/*',
        'application/jsonx',
      ),
      fc.oneof(
        fc.constantFrom(
          '{',
          '{"a":',
          '[]',
          'null',
          '"\\ud800"',
          '{"amount":1e999}',
          'a=1&a=2',
          '\u0000',
          '%ZZ',
        ),
        fc.string({ unit: 'binary', maxLength: 60 }),
      ),
    )
    .map<Body>(([contentType, payload]) => ({ kind: 'raw', contentType, payload })),
);

type Auth =
  | 'none'
  | 'bearer'
  | 'wallet-bearer'
  | 'bearer-garbage'
  | 'basic'
  | 'basic-garbage'
  | 'odd'
  | 'initial-token'
  | 'registration-token';

const auth = fc.constantFrom<Auth>(
  'none',
  'bearer',
  'wallet-bearer',
  'bearer-garbage',
  'basic',
  'basic-garbage',
  'odd',
  'initial-token',
  'registration-token',
);

const oddAuthorization = fc.constantFrom(
  'Bearer',
  'Bearer ',
  'bearer at_x at_y',
  'Basic',
  'Basic !!!',
  `Basic ${Buffer.from('pk_\u0000:sk_').toString('base64')}`,
  `Basic ${Buffer.from(':').toString('base64')}`,
  `Basic ${Buffer.from('%E0%A4%A:x').toString('base64')}`,
  `Basic ${Buffer.from([0xed, 0xa0, 0x80, 0x3a, 0x78]).toString('base64')}`,
  'DPoP x',
  'Digest x',
);

const REGISTRATION_METADATA = {
  client_name: 'fuzz',
  client_uri: 'https://site.example',
  redirect_uris: ['https://site.example/callback'],
};

/**
 * A valid request per route, which a generated request may start from and then change: without
 * it, random values rarely get past the first check (an unknown client_id, a missing field).
 */
const BASELINES: Record<
  string,
  { query?: Array<[string, string]>; form?: Array<[string, string]>; json?: Record<string, unknown> }
> = {
  'GET /api/v1/oauth/authorize': {
    query: [
      ['client_id', '$client_id'],
      ['redirect_uri', '$redirect_uri'],
      ['response_type', 'code'],
      ['state', 'state-1'],
      ['scope', 'openid profile'],
      ['nonce', 'n-1'],
    ],
  },
  'POST /api/v1/oauth/token': {
    form: [
      ['grant_type', 'refresh_token'],
      ['refresh_token', '$refresh_token'],
    ],
  },
  'POST /api/v1/oauth/revoke': { form: [['token', '$access_token']] },
  'POST /api/v1/oauth/introspect': { form: [['token', '$access_token']] },
  'POST /api/v1/oauth/par': {
    form: [
      ['response_type', 'code'],
      ['redirect_uri', '$redirect_uri'],
      ['state', 'state-1'],
      ['scope', 'openid profile'],
    ],
  },
  'GET /api/users/search': { query: [['q', 'user']] },
  'GET /api/v1/wallet/transactions': { query: [['limit', '5']] },
  'POST /api/v1/wallet/charge': {
    json: { amount: 1, currency: 'COIN', description: 'fuzz', idempotency_key: 'key-1' },
  },
  'POST /api/v1/mobile/challenge': { json: { client_id: '$mobile_client_id', device_id: 'device-12345678' } },
  'POST /api/v1/mobile/verify': {
    json: {
      client_id: '$mobile_client_id',
      device_id: 'device-12345678',
      challenge: 'c',
      signature: 's',
      public_key: 'k',
      username: 'fuzz',
      password: 'p',
    },
  },
  'POST /api/v1/mobile/refresh': {
    json: {
      client_id: '$mobile_client_id',
      device_id: 'device-12345678',
      refresh_token: '$refresh_token',
      challenge: 'c',
      signature: 's',
    },
  },
  'POST /api/v1/mobile/logout': { json: { client_id: '$mobile_client_id', device_id: 'device-12345678' } },
  'POST /signin': {
    form: [
      ['username', 'fuzz'],
      ['password', 'password'],
    ],
  },
  'POST /signup': {
    form: [
      ['username', 'fuzz'],
      // Not among the 10,000 most common, so a generated sign-up can reach account creation.
      ['password', 'fuzz password 17'],
      ['email', 'a@example.com'],
    ],
  },
  'POST /api/v1/oauth/authorize/decision': {
    form: [
      ['request', 'r'],
      ['decision', 'allow'],
    ],
  },
  'GET /api/v1/oauth/logout': {
    query: [
      ['client_id', '$client_id'],
      ['id_token_hint', '$id_token'],
      ['post_logout_redirect_uri', '$post_logout_redirect_uri'],
      ['state', 'bye'],
    ],
  },
  'POST /api/v1/oauth/logout': {
    form: [
      ['client_id', '$client_id'],
      ['post_logout_redirect_uri', '$post_logout_redirect_uri'],
    ],
  },
  'POST /api/v1/oauth/logout/confirm': { form: [['decision', 'signout']] },
  'POST /signout': { form: [] },
  // A provider's answer with a state no trip of this browser holds, or a replayed one.
  'GET /signin/providers/:name/callback': {
    query: [
      ['state', 'forged-state-0123456789-0123456789-0123456789'],
      ['code', 'replayed-code'],
      ['iss', 'https://attacker.example'],
    ],
  },
  'POST /signin/providers/:name/callback': {
    form: [
      ['state', 'forged'],
      ['code', 'c'],
      ['user', '{"name":{"firstName":"A"}}'],
    ],
  },
  'POST /signin/providers/continue': { form: [['username', 'fuzz_provider']] },
  // RFC 8628: a device's request, its polling, and the page's code and decision.
  'POST /api/v1/oauth/device_authorization': { form: [['scope', 'openid offline_access']] },
  'POST /device': { form: [['user_code', 'BCDF-GHJK']] },
  'POST /device/decision': {
    form: [
      ['user_code', 'BCDF-GHJK'],
      ['decision', 'allow'],
    ],
  },
  'POST /developers/apps': {
    form: [
      ['name', 'Fuzz'],
      ['site_url', 'https://fuzz.example'],
      ['redirect_uris', 'https://fuzz.example/cb'],
      ['kind', 'confidential'],
    ],
  },
  'POST /developers/tokens': { form: [['uses', '1']] },
  // The signed-in user's own password ($password, never generated): a re-authenticated session
  // reaches past the pages' re-authentication check to the forms that change how it signs in.
  'POST /account/reauthenticate': { form: [['password', '$password']] },
  // RFC 7591 registration and RFC 7592's replacement, with valid metadata to change.
  'POST /api/v1/oauth/register': { json: REGISTRATION_METADATA },
  'PUT /api/v1/oauth/register/:client_id': {
    json: { client_id: '$registered_client_id', ...REGISTRATION_METADATA },
  },
  'POST /api/v1/mobile/verify/second-factor': {
    json: {
      client_id: '$mobile_client_id',
      device_id: 'device-12345678',
      mfa_token: 'mfa_x',
      code: '123456',
      challenge: 'c',
      signature: 's',
    },
  },
};

/** The baseline's pairs, changed by the generated ones: a generated name replaces the baseline's, or is sent as well. */
function overlay(
  base: Array<[string, string]> | undefined,
  changes: Array<[string, string]>,
  repeat: boolean,
): Array<[string, string]> {
  if (!base) return changes;
  if (repeat) return [...base, ...changes];
  const names = new Set(changes.map(([name]) => name));
  return [...base.filter(([name]) => !names.has(name)), ...changes];
}

/** Path tails a router cannot decode, or decodes to something odd: such a request reaches no route. */
const BAD_PATH_TAILS = ['%', '%E0%A4%A', '%ZZ', '%00', '%ED%A0%80', '%2e%2e/%2e%2e', '..;/x'];

interface GeneratedRequest {
  badPathTail: string | null;
  fromBaseline: boolean;
  repeat: boolean;
  route: number;
  pathValue: string;
  query: Array<[string, string]>;
  body: Body;
  auth: Auth;
  oddAuthorization: string;
  withSession: boolean;
  withCsrf: boolean;
}

/** `favoured`: the indexes of the signed-in browser's routes, picked as often again as the others. */
function generatedRequest(routeCount: number, favoured: readonly number[]): fc.Arbitrary<GeneratedRequest> {
  return fc.record({
    badPathTail: fc.oneof(
      { weight: 19, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom(...BAD_PATH_TAILS) },
    ),
    fromBaseline: fc.boolean(),
    repeat: fc.boolean(),
    route: fc.oneof(fc.nat({ max: routeCount - 1 }), fc.constantFrom(...favoured)),
    pathValue: anyString,
    query: pairs,
    body,
    auth,
    oddAuthorization,
    withSession: fc.boolean(),
    withCsrf: fc.boolean(),
  });
}

function authorization(request: GeneratedRequest): string | undefined {
  switch (request.auth) {
    case 'none':
      return undefined;
    case 'bearer':
      return `Bearer ${credentials.accessToken}`;
    case 'wallet-bearer':
      return `Bearer ${credentials.walletToken}`;
    case 'bearer-garbage':
      return 'Bearer at_not-a-real-token';
    case 'basic':
      return basic(credentials.client);
    case 'basic-garbage':
      return `Basic ${Buffer.from(`${credentials.client.clientId}:wrong`).toString('base64')}`;
    case 'odd':
      return request.oddAuthorization;
    case 'initial-token':
      return `Bearer ${credentials.initialAccessToken}`;
    case 'registration-token':
      return `Bearer ${credentials.registered.accessToken}`;
  }
}

/** Placeholders of the hostile strings, replaced by the run's real identifiers and tokens. */
function real(value: string): string {
  switch (value) {
    case '$client_id':
      return credentials.client.clientId;
    case '$portal_client_id':
      return credentials.portalClientId;
    case '$mobile_client_id':
      return credentials.mobileClientId;
    case '$redirect_uri':
      return credentials.client.redirectUri;
    case '$access_token':
      return credentials.accessToken;
    case '$refresh_token':
      return credentials.refreshToken;
    case '$id_token':
      return credentials.idToken;
    case '$post_logout_redirect_uri':
      return POST_LOGOUT_REDIRECT_URI;
    case '$password':
      return credentials.password;
    case '$registered_client_id':
      return credentials.registered.clientId;
    default:
      return value;
  }
}

function realJson(value: unknown): unknown {
  if (typeof value === 'string') return real(value);
  if (Array.isArray(value)) return value.map(realJson);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, realJson(inner)]));
  return value;
}

/** The request as light-my-request sends it. */
function toInject(request: GeneratedRequest) {
  const route = routes[request.route] as CatalogueRoute;
  const routePath = route.path.replace(/:[A-Za-z_]+/g, () => percentEncode(real(request.pathValue)));
  const path = request.badPathTail === null ? routePath : `${routePath}/${request.badPathTail}`;
  const baseline = request.fromBaseline ? BASELINES[`${route.method} ${route.path}`] : undefined;
  const queryPairs = overlay(baseline?.query, request.query, request.repeat).map(
    ([name, value]): [string, string] => [name, real(value)],
  );
  if (request.withCsrf) queryPairs.push(['csrf_token', credentials.csrfToken]);
  const query = encodePairs(queryPairs);
  const headers: Record<string, string> = {};
  const authHeader = authorization(request);
  if (authHeader !== undefined) headers.authorization = authHeader;
  if (request.withSession) headers.cookie = credentials.cookie;
  let payload: string | undefined;
  let generatedBody = request.body;
  if (baseline?.form && generatedBody.kind !== 'json')
    generatedBody = {
      kind: 'form',
      pairs: overlay(baseline.form, generatedBody.kind === 'form' ? generatedBody.pairs : [], request.repeat),
    };
  if (baseline?.json)
    generatedBody = {
      kind: 'json',
      value:
        generatedBody.kind === 'json' &&
        generatedBody.value !== null &&
        typeof generatedBody.value === 'object'
          ? { ...baseline.json, ...generatedBody.value }
          : baseline.json,
    };
  if (route.method !== 'GET' && route.method !== 'HEAD') {
    const withCsrf = (list: Array<[string, string]>): Array<[string, string]> =>
      request.withCsrf ? [...list, ['csrf_token', credentials.csrfToken]] : list;
    switch (generatedBody.kind) {
      case 'none':
        break;
      case 'form':
        headers['content-type'] = 'application/x-www-form-urlencoded';
        payload = encodePairs(withCsrf(generatedBody.pairs.map(([name, value]) => [name, real(value)])));
        break;
      case 'json': {
        headers['content-type'] = 'application/json';
        const value = realJson(generatedBody.value);
        payload = JSON.stringify(
          value !== null && typeof value === 'object' && !Array.isArray(value) && request.withCsrf
            ? { csrf_token: credentials.csrfToken, ...value }
            : value,
        );
        break;
      }
      case 'raw':
        headers['content-type'] = generatedBody.contentType;
        payload = generatedBody.payload;
        break;
    }
  }
  return {
    method: route.method as 'GET' | 'POST',
    url: query ? `${path}?${query}` : path,
    headers,
    ...(payload === undefined ? {} : { payload }),
  };
}

/** RFC 6749 §5.2: error and error_description are %x20-21 / %x23-5B / %x5D-7E. */
const OAUTH_ERROR_TEXT = /^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/;

/**
 * `page`: whether the request reached a browser route, whose errors are pages; every other error is
 * JSON. 'either': a console path with a tail the router refuses (a page) or routes nowhere (JSON).
 */
function checkResponse(route: CatalogueRoute, page: boolean | 'either', res: LightMyRequestResponse): void {
  const where = `${route.method} ${route.path} → ${res.statusCode}: ${res.body.slice(0, 300)}`;
  if (res.statusCode >= 500) throw new Error(`a ${res.statusCode}: ${where}`);
  if (res.statusCode < 400) return;
  const type = String(res.headers['content-type'] ?? '');
  if (page === 'either' && type.startsWith('text/html')) return;
  if (page === true) {
    if (!type.startsWith('text/html'))
      throw new Error(`a browser route answered ${type}, not a page: ${where}`);
    return;
  }
  if (!type.startsWith('application/json')) throw new Error(`an error that is not JSON (${type}): ${where}`);
  const parsed = res.json() as Record<string, unknown>;
  if (
    parsed.ok !== false ||
    typeof parsed.error !== 'string' ||
    typeof parsed.error_description !== 'string' ||
    Object.keys(parsed).length !== 3
  ) {
    throw new Error(`an error body not in the contract's shape: ${where}`);
  }
  if (!OAUTH_ERROR_TEXT.test(parsed.error) || !OAUTH_ERROR_TEXT.test(parsed.error_description)) {
    throw new Error(`an error text outside RFC 6749 §5.2's characters: ${where}`);
  }
  const challenge = res.headers['www-authenticate'];
  if (challenge !== undefined && !/^[\x20-\x7E]*$/.test(String(challenge))) {
    throw new Error(`a WWW-Authenticate header outside printable ASCII: ${where}`);
  }
}

const cookieHeader = (cookies: Map<string, string>) =>
  [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');

/** Keeps the cookies an answer sets, as a browser does; whether any changed or went. */
function keepCookies(cookies: Map<string, string>, res: LightMyRequestResponse): boolean {
  let changed = false;
  for (const cookie of res.cookies as Array<{
    name: string;
    value: string;
    maxAge?: number;
    expires?: Date;
  }>) {
    const gone =
      cookie.value === '' || cookie.maxAge === 0 || (cookie.expires?.getTime() ?? Infinity) < Date.now();
    if (gone) changed = cookies.delete(cookie.name) || changed;
    else if (cookies.get(cookie.name) !== cookie.value) {
      cookies.set(cookie.name, cookie.value);
      changed = true;
    }
  }
  return changed;
}

/** The account page's CSRF token (its sign-out form's), when the cookies hold a live session. */
async function accountCsrf(cookies: Map<string, string>): Promise<string | undefined> {
  const account = await t.app.inject({
    method: 'GET',
    url: '/account',
    headers: { cookie: cookieHeader(cookies) },
  });
  keepCookies(cookies, account);
  return account.statusCode === 200 ? hiddenFields(account.body, '/signout').csrf_token : undefined;
}

/** POSTs a page's form (its hidden fields and `fields`) with the browser's cookies, keeping what it sets. */
async function postForm(
  cookies: Map<string, string>,
  pageUrl: string,
  action: string,
  fields: Record<string, string>,
) {
  const page = await t.app.inject({
    method: 'GET',
    url: pageUrl,
    headers: { cookie: cookieHeader(cookies) },
  });
  keepCookies(cookies, page);
  // No form to post: the browser is someone else's now (a generated sign-up signed it in anew).
  if (page.statusCode !== 200) return page;
  const res = await t.app.inject({
    method: 'POST',
    url: action,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(cookies) },
    payload: new URLSearchParams({ ...hiddenFields(page.body, action), ...fields }).toString(),
  });
  keepCookies(cookies, res);
  return res;
}

/** Enters the console with the operator's next code; whether it opened. */
async function enterConsole(cookies: Map<string, string>, operator: TestOperator): Promise<boolean> {
  const res = await postForm(cookies, '/admin/enter', '/admin/enter', { code: nextCode(t, operator) });
  return res.statusCode === 303;
}

/**
 * A browser signed in as the operator (password, then the second step's code) and inside the
 * console: its cookies and CSRF token, or null when the sign-in is refused.
 */
async function signedInBrowser(
  operator: TestOperator,
): Promise<{ cookies: Map<string, string>; csrf: string } | null> {
  const cookies = new Map<string, string>();
  const { username, password } = operator.user;
  const signIn = await postForm(cookies, '/signin', '/signin', { username, password });
  if (signIn.statusCode !== 303) return null;
  const step = String(signIn.headers.location ?? '');
  if (step.startsWith('/signin/second-factor')) {
    const passed = await postForm(cookies, step, '/signin/second-factor', { code: nextCode(t, operator) });
    if (passed.statusCode !== 303) return null;
  }
  if (!(await enterConsole(cookies, operator))) return null;
  const csrf = await accountCsrf(cookies);
  return csrf ? { cookies, csrf } : null;
}

/** Registers a client with the initial access token (RFC 7591): after a generated DELETE ended the last one. */
async function freshRegistration(): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/oauth/register',
    headers: {
      authorization: `Bearer ${credentials.initialAccessToken}`,
      'content-type': 'application/json',
    },
    payload: JSON.stringify(REGISTRATION_METADATA),
  });
  expect(res.statusCode).toBe(201);
  const body = res.json() as { client_id: string; registration_access_token: string };
  credentials.registered = { clientId: body.client_id, accessToken: body.registration_access_token };
}

/** Uses a signed-in browser from now on. */
function useBrowser(browser: { cookies: Map<string, string>; csrf: string }): void {
  jar = browser.cookies;
  credentials.cookie = cookieHeader(jar);
  credentials.csrfToken = browser.csrf;
}

/**
 * Before a request that carries the session: after one that may have ended or changed it, the
 * session is checked (the account page answers) and its CSRF token read again; a session that
 * ended is replaced by a fresh sign-in, as another user's when generated requests locked this one
 * (wrong passwords at re-authentication count against the account).
 */
async function liveSession(): Promise<void> {
  if (!sessionDirty) return;
  sessionDirty = false;
  const csrf = await accountCsrf(jar);
  const inConsole = async () =>
    (await t.app.inject({ method: 'GET', url: '/admin/session', headers: { cookie: cookieHeader(jar) } }))
      .statusCode === 200 || (await enterConsole(jar, credentials.operator));
  if (csrf && (await inConsole())) {
    useBrowser({ cookies: jar, csrf: (await accountCsrf(jar)) ?? csrf });
    return;
  }
  let browser = await signedInBrowser(credentials.operator);
  if (!browser) {
    const operator = await makeOperator(t, 'owner');
    Object.assign(credentials, {
      username: operator.user.username,
      password: operator.user.password,
      operator,
    });
    browser = await signedInBrowser(operator);
  }
  if (!browser) throw new Error('a new user could not sign in');
  freshSignIns++;
  useBrowser(browser);
}

beforeAll(async () => {
  t = await createTestApp();
  upstream = await startOidcStandIn({
    clientId: 'fuzz',
    clientSecret: 'fuzz-secret-0123456789',
    accounts: { ada: { sub: 'sub-ada' } },
  });
  await addProvider(
    t.database.db,
    depsOf(t).ctx,
    {
      name: 'oidc',
      kind: 'oidc',
      displayName: 'Fuzz ID',
      issuer: upstream.url,
      clientId: 'fuzz',
      clientSecret: 'fuzz-secret-0123456789',
    },
    'cli',
  );
  const operator = await makeOperator(t, 'owner');
  const user = operator.user;
  const client = await makeClient(t, {
    wallet: true,
    postLogoutRedirectUris: [POST_LOGOUT_REDIRECT_URI],
    deviceGrant: true,
  });
  const mobile = await makeOfficialApp(t);
  // Bearer tokens of another client: the generated requests revoke the first client's grants.
  const bearerClient = await makeClient(t, { wallet: true });
  const tokenOf = async (scopes: string[], of: TestClient = bearerClient) => {
    const res = await exchangeCode(t.app, of, await mintCode(t, of, user, { scopes }));
    expect(res.statusCode).toBe(200);
    return res.json() as { access_token: string; refresh_token?: string; id_token?: string };
  };
  const plain = await tokenOf(['openid', 'profile', 'email', 'verified']);
  const refreshable = await tokenOf(['openid', 'offline_access'], client);
  const wallet = await tokenOf(['openid', 'wallet']);
  const browser = await signedInBrowser(operator);
  if (!browser) throw new Error('the operator could not sign in');
  credentials = {
    client,
    mobileClientId: mobile.clientId,
    accessToken: plain.access_token,
    walletToken: wallet.access_token,
    refreshToken: refreshable.refresh_token ?? '',
    idToken: refreshable.id_token ?? '',
    cookie: '',
    csrfToken: '',
    portalClientId: (
      await createOwnedApp(
        t.database.db,
        { config: t.config, clock: t.clock },
        {
          ownerUserId: user.id,
          input: {
            name: 'Fuzz App',
            siteUrl: 'https://app.example',
            redirectUris: ['https://app.example/cb'],
          },
          via: 'portal',
        },
      )
    ).client_id,
    username: user.username,
    password: user.password,
    operator,
    initialAccessToken: (
      await createRegistrationToken(t.database.db, depsOf(t).ctx, {
        ownerUserId: null,
        createdBy: 'cli',
        uses: 1000,
      })
    ).token,
    registered: { clientId: '', accessToken: '' },
  };
  await freshRegistration();
  useBrowser(browser);
  const catalogue = await t.app.inject({ method: 'GET', url: '/api/v1/' });
  routes = (catalogue.json() as { routes: CatalogueRoute[] }).routes.map((route) => ({
    ...route,
    // The catalogue's paths are relative to the base URL.
    path: route.path.startsWith('/') ? route.path : `/${route.path}`,
  }));
  expect(routes.length).toBeGreaterThan(20);
});
afterAll(async () => {
  await upstream?.stop();
  await t.close();
});

describe('every route under generated hostile input', () => {
  it(`answers no 5xx, only contract-shaped errors, and stays healthy (${RUNS} requests, seed ${SEED})`, {
    timeout: 600_000,
  }, async () => {
    process.stdout.write(`fuzz: seed ${SEED}, ${RUNS} requests (replay with FUZZ_SEED=${SEED})\n`);
    let sent = 0;
    /** Requests to the registration routes that got past their token (not a 401). */
    let registrationReached = 0;
    const favoured = routes.flatMap((route, index) =>
      familyOf(route.path) !== undefined || SESSION_ROUTES.includes(route.path) ? [index] : [],
    );
    /** Per family: requests with a live session and its CSRF token, without a session, and pages answered signed in. */
    const walked = new Map(SESSION_FAMILIES.map(([name]) => [name, { live: 0, anonymous: 0, signedIn: 0 }]));
    await fc.assert(
      fc.asyncProperty(generatedRequest(routes.length, favoured), async (request) => {
        const route = routes[request.route] as CatalogueRoute;
        if (request.withSession) await liveSession();
        const res = await t.app.inject(toInject(request));
        sent++;
        if (request.withSession && (keepCookies(jar, res) || route.method !== 'GET')) {
          credentials.cookie = cookieHeader(jar);
          sessionDirty = true;
        }
        if (route.path.startsWith('/api/v1/oauth/register') && res.statusCode !== 401) registrationReached++;
        // RFC 7592 §2.3: a generated DELETE with the registration access token ended its client.
        if (
          route.method === 'DELETE' &&
          route.path.startsWith('/api/v1/oauth/register/') &&
          res.statusCode === 204
        )
          await freshRegistration();
        const family = walked.get(familyOf(route.path) ?? '');
        if (family && !request.withSession) family.anonymous++;
        if (family && request.withSession && request.withCsrf) family.live++;
        if (family && request.withSession && route.method === 'GET' && res.statusCode === 200)
          family.signedIn++;
        // A dot segment as the path's parameter (`/admin/users/./x`) is resolved away by the URL
        // parser, so the request routes elsewhere, as a refused tail does.
        const elsewhere =
          request.badPathTail !== null ||
          (/:[A-Za-z_]/.test(route.path) && /^\.{1,2}$/.test(request.pathValue));
        const consoleTail =
          elsewhere &&
          /^\/(admin|developers|signin\/providers|account\/(reauthenticate\/)?providers)(\/|$)/.test(
            route.path,
          );
        checkResponse(
          route,
          consoleTail ? 'either' : answersPages(route) && request.badPathTail === null,
          res,
        );
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(sent).toBeGreaterThanOrEqual(RUNS);
    process.stdout.write(
      `fuzz: walked ${JSON.stringify(Object.fromEntries(walked))}, ${freshSignIns} fresh sign-ins\n`,
    );
    // A long run reached every family with and without a live session, and the account pages
    // answered the signed-in user (the session was alive, not just sent).
    if (RUNS >= 1000) {
      for (const [name, count] of walked) {
        expect(count.live, name).toBeGreaterThan(0);
        expect(count.anonymous, name).toBeGreaterThan(0);
      }
      expect(walked.get('account')?.signedIn).toBeGreaterThan(0);
      expect(registrationReached).toBeGreaterThan(0);
    }

    // Healthy after: the public routes answer, a fresh code still becomes a working token. For a
    // new client: the run may legitimately have disabled the others or rotated their secrets in the
    // console or the portal.
    const status = await t.app.inject({ method: 'GET', url: '/api/v1/platform/status' });
    expect(status.statusCode).toBe(200);
    const user = await makeUser(t);
    const after = await makeClient(t);
    const exchanged = await exchangeCode(t.app, after, await mintCode(t, after, user));
    expect(exchanged.statusCode).toBe(200);
    const userinfo = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${(exchanged.json() as { access_token: string }).access_token}` },
    });
    expect(userinfo.statusCode).toBe(200);
    expect(userinfo.json()).toMatchObject({ sub: String(user.id), username: user.username });
  });
});
