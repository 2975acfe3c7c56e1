/**
 * The one error hierarchy of the service (after node-oidc-provider's lib/helpers/errors.js).
 *
 * `error` is the contract's code, `description` is shown to the caller, `detail` is
 * for logs only. `redirectable` is false for problems with client_id or redirect_uri, which must
 * render a page and never redirect (RFC 6749 §4.1.2.1).
 */
export interface ApiErrorOptions {
  detail?: string;
  headers?: Record<string, string>;
  redirectable?: boolean;
  cause?: unknown;
  /**
   * The values received that the refusal is about, for the application's log its owners read
   * (src/modules/client-activity): never a secret, a code or a token.
   */
  receivedValues?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * No stack trace: for answers the protocol expects thousands of times a second (a waiting
   * device's polls), where capturing one costs more than the rest of the answer. Never for an
   * error a developer may have to trace.
   */
  withoutStack?: boolean;
}

/**
 * RFC 6749 §5.2 (and §4.1.2.1, RFC 6750 §3): `error` and `error_description` are %x20-21 / %x23-5B /
 * %x5D-7E, printable ASCII without `"` and `\`, so they fit a quoted WWW-Authenticate parameter and
 * a redirect's query as they are. Anything else is replaced: an error text can never carry it out.
 */
const OAUTH_TEXT_REPLACEMENTS: Record<string, string> = {
  '§': 'section ',
  '–': '-',
  '—': '-',
  '≤': '<=',
  '≥': '>=',
  '…': '...',
  '"': "'",
  '\\': '/',
};

/** `text` within RFC 6749 §5.2's characters (see OAUTH_TEXT_REPLACEMENTS). */
export function oauthErrorText(text: string): string {
  return /^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/.test(text)
    ? text
    : text.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/gu, (char) => OAUTH_TEXT_REPLACEMENTS[char] ?? '?');
}

export class ApiError extends Error {
  readonly status: number;
  readonly error: string;
  readonly description: string;
  readonly detail: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly redirectable: boolean;
  readonly receivedValues: ApiErrorOptions['receivedValues'];

  constructor(status: number, error: string, description: string, options: ApiErrorOptions = {}) {
    const text = oauthErrorText(description);
    const stackTraceLimit = Error.stackTraceLimit;
    if (options.withoutStack) Error.stackTraceLimit = 0;
    super(text, { cause: options.cause });
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ApiError';
    this.status = status;
    this.error = oauthErrorText(error);
    this.description = text;
    this.detail = options.detail;
    this.headers = options.headers ?? {};
    this.redirectable = options.redirectable ?? true;
    this.receivedValues = options.receivedValues;
  }

  /** The contract's JSON body. */
  toBody(): { ok: false; error: string; error_description: string } {
    return { ok: false, error: this.error, error_description: this.description };
  }
}

function errorClass(
  status: number,
  error: string,
  defaultDescription: string,
  defaults: ApiErrorOptions = {},
) {
  return class extends ApiError {
    constructor(description: string = defaultDescription, options: ApiErrorOptions = {}) {
      super(status, error, description, {
        ...defaults,
        ...options,
        headers: { ...defaults.headers, ...options.headers },
      });
    }
  };
}

export const InvalidRequest = errorClass(400, 'invalid_request', 'The request is malformed.');
export const InvalidGrant = errorClass(
  400,
  'invalid_grant',
  'The grant is invalid, expired or already used.',
);
export const UnsupportedGrantType = errorClass(
  400,
  'unsupported_grant_type',
  'This grant type is not supported.',
);
export const InvalidScope = errorClass(400, 'invalid_scope', 'The requested scope is invalid.');
/** RFC 6749 §5.2: the client may not use this grant type. */
export const UnauthorizedClient = errorClass(
  400,
  'unauthorized_client',
  'This client may not use this grant type.',
);
/** RFC 8628 §3.5: the device's polling answers. */
export const AuthorizationPending = errorClass(
  400,
  'authorization_pending',
  'The user has not yet allowed or denied the request; poll again after the interval.',
  { withoutStack: true },
);
export const SlowDown = errorClass(400, 'slow_down', 'Polling too fast; the interval grew by 5 seconds.', {
  withoutStack: true,
});
/** RFC 8628 §3.5 `access_denied`: the user denied the request (400, as every token endpoint error). */
export const DeviceAccessDenied = errorClass(400, 'access_denied', 'The user denied the request.');
export const ExpiredToken = errorClass(
  400,
  'expired_token',
  'The device_code has expired; start a new device authorization.',
);
export const InvalidClient = errorClass(401, 'invalid_client', 'Client authentication failed.', {
  headers: { 'www-authenticate': 'Basic realm="idp", charset="UTF-8"' },
});
export const InsufficientFunds = errorClass(
  402,
  'insufficient_funds',
  'The balance is too low for this charge.',
);
export const AccessDenied = errorClass(403, 'access_denied', 'The caller lacks rights for this endpoint.');
export const NotFound = errorClass(404, 'not_found', 'Nothing is here.');
export const IdempotencyConflict = errorClass(
  409,
  'idempotency_conflict',
  'This idempotency_key was already used with a different request.',
);
export const PayloadTooLarge = errorClass(413, 'payload_too_large', 'The request body is larger than 1 MiB.');
export const RateLimited = errorClass(429, 'rate_limited', 'Too many requests; retry after the given time.');
export const ServerError = errorClass(
  500,
  'server_error',
  'An unexpected error occurred; it has been logged.',
);
export const Unavailable = errorClass(
  503,
  'unavailable',
  'The service is temporarily unavailable; retry shortly.',
);

export class MethodNotAllowed extends ApiError {
  constructor(method: string, allowed: readonly string[]) {
    super(405, 'method_not_allowed', `${method} is not allowed here; use ${allowed.join(', ')}.`, {
      headers: { allow: allowed.join(', ') },
    });
  }
}

/** The RFC 6750 §3 realm of every bearer-protected route. */
const BEARER_REALM = 'Bearer realm="idp"';

/**
 * The DPoP proof algorithms accepted (RFC 9449 §7.1 `algs`, discovery's `dpop_signing_alg_values_supported`):
 * Ed25519 under both its names, the polymorphic `EdDSA` and the fully-specified `Ed25519` (RFC 9864 §2.2)
 * that oauth4webapi and openid-client send.
 */
export const DPOP_ALGORITHMS = ['ES256', 'EdDSA', 'Ed25519'] as const;

/** RFC 9449 §7.1: the DPoP challenge of a route that takes DPoP-bound tokens too. */
const DPOP_REALM = 'DPoP realm="idp"';
const DPOP_ALGS = `algs="${DPOP_ALGORITHMS.join(' ')}"`;

/**
 * 401 `unauthorized`: no Authorization header, or one that is not `Bearer <token>` (RFC 6750 §3.1: no
 * error attribute). `dpop`: the route takes DPoP too, so a DPoP challenge follows (RFC 9449 §7.1).
 */
export class Unauthorized extends ApiError {
  constructor(description = 'Send the access token as "Authorization: Bearer <token>".', dpop = false) {
    super(401, 'unauthorized', description, {
      headers: { 'www-authenticate': dpop ? `${BEARER_REALM}, ${DPOP_REALM}, ${DPOP_ALGS}` : BEARER_REALM },
    });
  }
}

/**
 * 401 `invalid_token`: a well-formed bearer token that is unknown, expired or revoked. `scheme`: the
 * scheme the token came with on a route that takes DPoP too: the error attribute goes with that
 * scheme's challenge, and both challenges are sent (RFC 9449 §7.1).
 */
export class InvalidToken extends ApiError {
  constructor(description = 'The access token is invalid, expired or revoked.', scheme?: 'bearer' | 'dpop') {
    const error = `error="invalid_token", error_description="${oauthErrorText(description)}"`;
    const challenge =
      scheme === 'dpop'
        ? `${BEARER_REALM}, ${DPOP_REALM}, ${error}, ${DPOP_ALGS}`
        : scheme === 'bearer'
          ? `${BEARER_REALM}, ${error}, ${DPOP_REALM}, ${DPOP_ALGS}`
          : `${BEARER_REALM}, ${error}`;
    super(401, 'invalid_token', description, { headers: { 'www-authenticate': challenge } });
  }
}

/**
 * A refused DPoP proof (RFC 9449 §7.1, §8, §9): `invalid_dpop_proof`, or `use_dpop_nonce` when it
 * lacks the server's current nonce. The token endpoint answers 400 (RFC 9449 §5, §8); a resource
 * answers 401 with the DPoP challenge (§7.1, §9).
 */
export class DpopProofError extends ApiError {
  constructor(error: 'invalid_dpop_proof' | 'use_dpop_nonce', description: string, at: 'token' | 'resource') {
    const headers: Record<string, string> =
      at === 'resource'
        ? {
            'www-authenticate': `${DPOP_REALM}, error="${error}", error_description="${oauthErrorText(description)}", ${DPOP_ALGS}`,
          }
        : {};
    super(at === 'resource' ? 401 : 400, error, description, { headers });
  }
}
