import type { Selectable } from 'kysely';
import type { ClientsTable } from '../../db/schema.js';

/** A registered client (site) as every layer above the repositories sees one: never its secret's hash. */
export interface Client {
  /** The database id (what other tables reference as `client_pk`). */
  id: number;
  /** The public `client_id` (`pk_…`). */
  clientId: string;
  name: string;
  siteUrl: string;
  redirectUris: string[];
  /** May request the `wallet` scope (CONTRACT.md §6). */
  wallet: boolean;
  /** The service's own mobile app (SPEC.md: the mobile sign-in API). */
  officialMobile: boolean;
  /** Where logout tokens are POSTed (OIDC Back-Channel Logout 1.0 §2.2), or null. */
  backchannelLogoutUri: string | null;
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** For repositories only: a `clients` row as a `Client`. */
export function toClient(row: Omit<Selectable<ClientsTable>, 'secret_hash'>): Client {
  return {
    id: row.id,
    clientId: row.client_id,
    name: row.name,
    siteUrl: row.site_url,
    redirectUris: row.redirect_uris,
    wallet: row.wallet,
    officialMobile: row.official_mobile,
    backchannelLogoutUri: row.backchannel_logout_uri,
    disabledAt: row.disabled_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
