import { ApiError } from '../../../lib/errors.js';
import { MAX_POST_LOGOUT_REDIRECT_URIS, MAX_REDIRECT_URIS } from '../../clients/clients.schemas.js';
import { isScope } from '../scopes.js';

/**
 * RFC 7591 §2 client metadata, as the clients service takes it (the same validation as the CLI
 * and the portal). Only the structure is checked here: what a value may be (an https site, a
 * redirect URI that suits it, a known algorithm) is the clients service's to say.
 */
export interface RegistrationInput {
  name: string;
  siteUrl: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  isPublic: boolean;
  requirePar: boolean;
  requireDpop: boolean;
  /** `grant_types` names the device grant (RFC 8628 §3.4's grant type URI, RFC 7591 §2). */
  deviceGrant: boolean;
  /** Absent: the default, RS256 (OIDC Registration §2). */
  idTokenAlg?: string;
  logoUri?: string;
  backchannelLogoutUri?: string;
}

/** RFC 7591 §3.2.2's two errors that are ours to answer (no software statements here). */
export type RegistrationErrorCode = 'invalid_redirect_uri' | 'invalid_client_metadata';

/** 400 with RFC 7591 §3.2.2's error code, in the contract's error shape. */
export class RegistrationError extends ApiError {
  constructor(error: RegistrationErrorCode, description: string) {
    super(400, error, description);
  }
}

const invalid = (description: string) => new RegistrationError('invalid_client_metadata', description);

/** Grant types every registered client may use (RFC 7591 §2.1: the token endpoint's two). */
export const REGISTERED_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

/** RFC 8628 §3.4: the device grant's type; only clients registered for it may use it. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** What `grant_types` may hold. */
const GRANT_TYPES: readonly string[] = [...REGISTERED_GRANT_TYPES, DEVICE_CODE_GRANT_TYPE];

/**
 * token_endpoint_auth_method values (RFC 7591 §2): a secret sent either way, or none (a public
 * client). A confidential client may use either way whichever it registered, so the answer
 * names the default, client_secret_basic (RFC 7591 §3.2.1 lets the server replace a value).
 */
const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;

/** No URI or name of ours comes near this; longer values are refused before any parsing. */
const MAX_TEXT = 2048;

type Body = Record<string, unknown>;

/** A received value quoted in an error: enough to recognise it. */
const shown = (value: string) => (value.length > 100 ? `${value.slice(0, 100)}...` : value);

function text(body: Body, field: string, required: string | null): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) {
    if (required !== null) throw invalid(required);
    return undefined;
  }
  if (typeof value !== 'string') throw invalid(`${field} must be a string.`);
  if (value.length > MAX_TEXT) throw invalid(`${field} must be at most ${MAX_TEXT} characters.`);
  return value.trim();
}

function texts(body: Body, field: string, max: number): string[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string'))
    throw invalid(`${field} must be an array of strings.`);
  if (value.length > max) {
    const error = field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata';
    throw new RegistrationError(error, `${field} may hold at most ${max} entries.`);
  }
  if (value.some((item) => item.length > MAX_TEXT))
    throw invalid(`each of ${field} must be at most ${MAX_TEXT} characters.`);
  return value.map((item) => item.trim());
}

function flag(body: Body, field: string): boolean {
  const value = body[field];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid(`${field} must be true or false.`);
  return value;
}

/** The host of a site URL, as a client's name when it sends none (RFC 7591 §2: client_name is optional). */
function hostOf(siteUrl: string): string {
  try {
    return new URL(siteUrl.trim()).host || siteUrl;
  } catch {
    return siteUrl;
  }
}

/**
 * The RFC 7591 §2 metadata of a registration request (or an RFC 7592 §2.2 update: the whole
 * metadata again) as clients service input. Unknown fields are ignored (RFC 7591 §2), but not
 * what this server cannot honour: another grant or response type, another way of client
 * authentication, the rights only an operator grants.
 * @throws RegistrationError
 */
export function registrationInput(body: unknown): RegistrationInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw invalid('Send the client metadata as a JSON object (RFC 7591 section 3.1).');
  const metadata = body as Body;
  const redirectUris = texts(metadata, 'redirect_uris', MAX_REDIRECT_URIS) ?? [];
  const siteUrl = text(
    metadata,
    'client_uri',
    "client_uri is required here: the URL of the client's site, shown on the sign-in and consent pages.",
  ) as string;

  const method = text(metadata, 'token_endpoint_auth_method', null) ?? 'client_secret_basic';
  if (!(AUTH_METHODS as readonly string[]).includes(method))
    throw invalid(`token_endpoint_auth_method must be ${AUTH_METHODS.join(', ')}; got '${shown(method)}'.`);
  const grantTypes = texts(metadata, 'grant_types', 10) ?? ['authorization_code'];
  const refusedGrant = grantTypes.find((grant) => !GRANT_TYPES.includes(grant));
  if (refusedGrant !== undefined)
    throw invalid(`grant_types may hold only ${GRANT_TYPES.join(', ')}; got '${shown(refusedGrant)}'.`);
  // RFC 7591 §2: redirect_uris is for redirect-based flows; a device (RFC 8628) never receives one.
  if (redirectUris.length === 0 && grantTypes.includes('authorization_code'))
    throw new RegistrationError(
      'invalid_redirect_uri',
      'redirect_uris is required: at least one redirect URI, unless grant_types holds ' +
        `${DEVICE_CODE_GRANT_TYPE} and not authorization_code (RFC 7591 section 2).`,
    );
  const responseTypes = texts(metadata, 'response_types', 10) ?? ['code'];
  const refusedResponse = responseTypes.find((type) => type !== 'code');
  if (refusedResponse !== undefined)
    throw invalid(`response_types may hold only code; got '${shown(refusedResponse)}'.`);
  checkScope(text(metadata, 'scope', null));
  // Never self-service (the wallet right is requested in the developer portal; an operator grants it).
  if (flag(metadata, 'wallet'))
    throw invalid('wallet cannot be registered: request the wallet right in the developer portal.');
  if (flag(metadata, 'official_mobile')) throw invalid('official_mobile cannot be registered.');

  const input: RegistrationInput = {
    name: text(metadata, 'client_name', null) ?? hostOf(siteUrl),
    siteUrl,
    redirectUris,
    postLogoutRedirectUris: texts(metadata, 'post_logout_redirect_uris', MAX_POST_LOGOUT_REDIRECT_URIS) ?? [],
    isPublic: method === 'none',
    requirePar: flag(metadata, 'require_pushed_authorization_requests'),
    requireDpop: flag(metadata, 'dpop_bound_access_tokens'),
    deviceGrant: grantTypes.includes(DEVICE_CODE_GRANT_TYPE),
  };
  const idTokenAlg = text(metadata, 'id_token_signed_response_alg', null);
  if (idTokenAlg !== undefined) input.idTokenAlg = idTokenAlg;
  const logoUri = text(metadata, 'logo_uri', null);
  if (logoUri !== undefined) input.logoUri = logoUri;
  const backchannelLogoutUri = text(metadata, 'backchannel_logout_uri', null);
  if (backchannelLogoutUri !== undefined) input.backchannelLogoutUri = backchannelLogoutUri;
  return input;
}

/**
 * RFC 7591 §2 `scope`: the scopes the client may ask for. Not stored (every client may ask for
 * every scope but `wallet`, which is an operator's grant), but a value naming an unknown scope or
 * `wallet` is refused rather than silently not honoured.
 */
function checkScope(scope: string | undefined): void {
  if (scope === undefined) return;
  for (const name of scope.split(' ').filter(Boolean)) {
    if (!isScope(name)) throw invalid(`scope names an unknown scope: '${shown(name)}'.`);
    if (name === 'wallet')
      throw invalid('scope cannot include wallet: request the wallet right in the developer portal.');
  }
}
