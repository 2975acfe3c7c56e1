import { ClientInputError } from '../../clients/client-input.js';
import type { ClientView, UpdateClientInput } from '../../clients/clients.schemas.js';
import {
  DEVICE_CODE_GRANT_TYPE,
  REGISTERED_GRANT_TYPES,
  RegistrationError,
  type RegistrationInput,
} from './registration-metadata.js';

/** The RFC 7591 §2 name of each field of the clients service's input. */
const METADATA_OF_FIELD: Record<string, string> = {
  name: 'client_name',
  siteUrl: 'client_uri',
  redirectUris: 'redirect_uris',
  postLogoutRedirectUris: 'post_logout_redirect_uris',
  logoUri: 'logo_uri',
  backchannelLogoutUri: 'backchannel_logout_uri',
  idTokenAlg: 'id_token_signed_response_alg',
  isPublic: 'token_endpoint_auth_method',
  requirePar: 'require_pushed_authorization_requests',
  requireDpop: 'dpop_bound_access_tokens',
  deviceGrant: 'grant_types',
  wallet: 'wallet',
  officialMobile: 'official_mobile',
};

/**
 * A refusal of the clients service (the CLI's and the portal's validation) as RFC 7591 §3.2.2
 * says it: `invalid_redirect_uri` when a redirect URI is refused, else `invalid_client_metadata`,
 * each problem prefixed with the metadata field it is about. Other errors pass unchanged.
 */
export function asRegistrationError(error: unknown): unknown {
  if (!(error instanceof ClientInputError)) return error;
  const problems = Object.entries(error.fields).map(([field, message]) => {
    const name = METADATA_OF_FIELD[field];
    return name === undefined ? message : `${name}: ${message}`;
  });
  const code = 'redirectUris' in error.fields ? 'invalid_redirect_uri' : 'invalid_client_metadata';
  return new RegistrationError(code, problems.slice(0, 3).join('; ') || error.description);
}

/** The registered metadata (RFC 7591 §3.2.1, RFC 7592 §3): what the client is now, never a secret. */
export interface RegisteredMetadata {
  client_id: string;
  /** When it was registered, in seconds since the epoch. */
  client_id_issued_at: number;
  /** RFC 7591 §3.2.1: required with a secret; 0, secrets do not expire unless rotated. */
  client_secret_expires_at?: 0;
  registration_client_uri: string;
  client_name: string;
  client_uri: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  logo_uri?: string;
  backchannel_logout_uri?: string;
  id_token_signed_response_alg: string;
  token_endpoint_auth_method: 'none' | 'client_secret_basic';
  grant_types: string[];
  response_types: string[];
  dpop_bound_access_tokens: boolean;
  require_pushed_authorization_requests: boolean;
}

/** The path of a client's RFC 7592 configuration endpoint. */
export const registrationPath = (clientId: string) =>
  `/api/v1/oauth/register/${encodeURIComponent(clientId)}`;

/**
 * The grants a client may use: without a redirect URI (a device's client) not the code flow, so
 * that the metadata read back registers again as it is (RFC 7592 §2.2).
 */
function grantTypesOf(view: ClientView): string[] {
  const grants: string[] = view.redirect_uris.length === 0 ? ['refresh_token'] : [...REGISTERED_GRANT_TYPES];
  return view.device_grant ? [...grants, DEVICE_CODE_GRANT_TYPE] : grants;
}

/** A client's metadata as the registration endpoints answer it. */
export function registeredMetadata(view: ClientView, publicUrl: string): RegisteredMetadata {
  const confidential = view.token_endpoint_auth_method !== 'none';
  return {
    client_id: view.client_id,
    client_id_issued_at: Math.floor(Date.parse(view.created_at) / 1000),
    ...(confidential ? { client_secret_expires_at: 0 as const } : {}),
    registration_client_uri: `${publicUrl}${registrationPath(view.client_id)}`,
    client_name: view.name,
    client_uri: view.site_url,
    redirect_uris: view.redirect_uris,
    post_logout_redirect_uris: view.post_logout_redirect_uris,
    ...(view.logo_uri === null ? {} : { logo_uri: view.logo_uri }),
    ...(view.backchannel_logout_uri === null ? {} : { backchannel_logout_uri: view.backchannel_logout_uri }),
    id_token_signed_response_alg: view.id_token_signed_response_alg,
    token_endpoint_auth_method: view.token_endpoint_auth_method,
    grant_types: grantTypesOf(view),
    // RFC 7591 §2.1: `code` goes with authorization_code.
    response_types: view.redirect_uris.length === 0 ? [] : ['code'],
    dpop_bound_access_tokens: view.dpop_bound_access_tokens,
    require_pushed_authorization_requests: view.require_pushed_authorization_requests,
  };
}

const added = (from: readonly string[], to: readonly string[]) => to.filter((uri) => !from.includes(uri));

/**
 * RFC 7592 §2.2: the metadata sent replaces the client's, a field left out goes back to its
 * default (or is removed), as the clients service's change of only what differs. Whether the
 * client has a secret cannot change: it would need a secret issued or dropped, which is the
 * portal's (a new client is the way).
 * @throws RegistrationError
 */
export function replacementOf(current: ClientView, input: RegistrationInput): UpdateClientInput {
  if (input.isPublic !== (current.token_endpoint_auth_method === 'none'))
    throw new RegistrationError(
      'invalid_client_metadata',
      `token_endpoint_auth_method cannot change between none and a secret: this client uses ${current.token_endpoint_auth_method}.`,
    );
  return {
    name: input.name,
    siteUrl: input.siteUrl,
    requirePar: input.requirePar,
    requireDpop: input.requireDpop,
    deviceGrant: input.deviceGrant,
    idTokenAlg: (input.idTokenAlg ?? 'RS256') as UpdateClientInput['idTokenAlg'],
    addRedirectUris: added(current.redirect_uris, input.redirectUris),
    removeRedirectUris: added(input.redirectUris, current.redirect_uris),
    addPostLogoutRedirectUris: added(current.post_logout_redirect_uris, input.postLogoutRedirectUris),
    removePostLogoutRedirectUris: added(input.postLogoutRedirectUris, current.post_logout_redirect_uris),
    logoUri: input.logoUri ?? '',
    backchannelLogoutUri: input.backchannelLogoutUri ?? '',
  };
}
