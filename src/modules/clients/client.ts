import type { Selectable } from 'kysely';
import type { ClientsTable } from '../../db/schema.js';
import type { ClientRegisteredVia } from '../../db/schema-developers.js';
import type { SigningAlgorithm } from '../../lib/signing-algorithms.js';

/** A registered client (site) as every layer above the repositories sees one: never its secret's hash. */
export interface Client {
  /** The database id (what other tables reference as `client_pk`). */
  id: number;
  /** The public `client_id` (`pk_…`). */
  clientId: string;
  name: string;
  siteUrl: string;
  redirectUris: string[];
  /** Where RP-initiated logout may send the browser back (OIDC RP-Initiated Logout 1.0 §3.1). */
  postLogoutRedirectUris: string[];
  /** May request the `wallet` scope. */
  wallet: boolean;
  /** The service's own mobile app (the mobile sign-in API). */
  officialMobile: boolean;
  /** RFC 9126 §6: authorize takes this client's requests only through PAR. */
  requirePar: boolean;
  /** May use the device authorization grant (RFC 8628 §3.4: the token endpoint's device_code grant). */
  deviceGrant: boolean;
  /** Which algorithm signs its id_tokens (`id_token_signed_response_alg`, OIDC Registration §2). */
  idTokenAlg: SigningAlgorithm;
  /** Has no secret (`token_endpoint_auth_method: none`): PKCE always, refresh tokens only bound by DPoP. */
  isPublic: boolean;
  /** `dpop_bound_access_tokens` (RFC 9449 §5.2): every token request must carry a DPoP proof. */
  requireDpop: boolean;
  /** Where logout tokens are POSTed (OIDC Back-Channel Logout 1.0 §2.2), or null. */
  backchannelLogoutUri: string | null;
  /** Its logo, shown on the sign-in and consent pages of its requests (RFC 7591 §2 `logo_uri`), or null. */
  logoUri: string | null;
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** When an operator approved it; null: not reviewed (CLIENT_REGISTRATION decides whom it signs in). */
  approvedAt: Date | null;
  registeredVia: ClientRegisteredVia;
  /** When its owners asked for the wallet right; null when they did not or it was granted. */
  walletRequestedAt: Date | null;
  /** When it was deleted: disabled for good and listed nowhere. */
  deletedAt: Date | null;
}

/** For repositories only: a `clients` row as a `Client`. */
export function toClient(row: Omit<Selectable<ClientsTable>, 'secret_hash'>): Client {
  return {
    id: row.id,
    clientId: row.client_id,
    name: row.name,
    siteUrl: row.site_url,
    redirectUris: row.redirect_uris,
    postLogoutRedirectUris: row.post_logout_redirect_uris,
    wallet: row.wallet,
    officialMobile: row.official_mobile,
    requirePar: row.require_pushed_authorization_requests,
    deviceGrant: row.device_grant,
    idTokenAlg: row.id_token_signed_response_alg,
    isPublic: row.is_public,
    requireDpop: row.require_dpop,
    backchannelLogoutUri: row.backchannel_logout_uri,
    logoUri: row.logo_uri,
    disabledAt: row.disabled_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    approvedAt: row.approved_at,
    registeredVia: row.registered_via,
    walletRequestedAt: row.wallet_requested_at,
    deletedAt: row.deleted_at,
  };
}
