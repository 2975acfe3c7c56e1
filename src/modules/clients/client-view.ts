import type { Client } from './client.js';
import type { ClientView } from './clients.schemas.js';

/** A client as operators see it (`idp clients list`, the console): never its secret or the secret's hash. */
export function presentClient(client: Client): ClientView {
  return {
    client_id: client.clientId,
    name: client.name,
    site_url: client.siteUrl,
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    wallet: client.wallet,
    official_mobile: client.officialMobile,
    require_pushed_authorization_requests: client.requirePar,
    device_grant: client.deviceGrant,
    id_token_signed_response_alg: client.idTokenAlg,
    token_endpoint_auth_method: client.isPublic ? 'none' : 'client_secret_basic',
    dpop_bound_access_tokens: client.requireDpop,
    backchannel_logout_uri: client.backchannelLogoutUri,
    logo_uri: client.logoUri,
    disabled: client.disabledAt !== null,
    created_at: client.createdAt.toISOString(),
  };
}

/** The settings of a client an audit event compares (never the secret or its hash). */
type AuditedSettings = Omit<ClientView, 'client_id' | 'created_at'>;

function auditedSettings(view: ClientView): AuditedSettings {
  const { client_id: _id, created_at: _created, ...settings } = view;
  return settings;
}

/**
 * The settings that differ between two views of one client, as the `before` and `after` of its
 * audit event; both empty when nothing changed.
 */
export function changedSettings(
  before: ClientView,
  after: ClientView,
): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const old = auditedSettings(before);
  const now = auditedSettings(after);
  const changed = (Object.keys(now) as (keyof AuditedSettings)[]).filter(
    (key) => JSON.stringify(old[key]) !== JSON.stringify(now[key]),
  );
  return {
    before: Object.fromEntries(changed.map((key) => [key, old[key]])),
    after: Object.fromEntries(changed.map((key) => [key, now[key]])),
  };
}

/** The settings a new client was registered with, as the `after` of its audit event. */
export function registeredSettings(view: ClientView): Record<string, unknown> {
  return { ...auditedSettings(view) };
}
