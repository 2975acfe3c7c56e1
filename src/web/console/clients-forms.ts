import type {
  ClientView,
  CreateClientInput,
  UpdateClientInput,
} from '../../modules/clients/clients.schemas.js';
import { formBody, text } from '../page-forms.js';

/**
 * The console's application form: the settings `idp clients create|update` has, each a text field
 * (lists one per line), and checkboxes that a browser sends only when ticked.
 */
export const clientForm = formBody({
  csrf_token: text,
  name: text,
  site_url: text,
  logo_uri: text,
  redirect_uris: text,
  post_logout_redirect_uris: text,
  backchannel_logout_uri: text,
  id_token_alg: text,
  require_dpop: text,
  require_par: text,
  device_grant: text,
  wallet: text,
  official_mobile: text,
  is_public: text,
});

export type ClientForm = {
  [K in
    | 'name'
    | 'site_url'
    | 'logo_uri'
    | 'redirect_uris'
    | 'post_logout_redirect_uris'
    | 'backchannel_logout_uri'
    | 'id_token_alg'
    | 'require_dpop'
    | 'require_par'
    | 'device_grant'
    | 'wallet'
    | 'official_mobile'
    | 'is_public']?: string;
};

/** The form as its fields show it again: text as typed, boxes ticked or not. */
export interface ClientFormValues {
  name: string;
  siteUrl: string;
  logoUri: string;
  redirectUris: string;
  postLogoutRedirectUris: string;
  backchannelLogoutUri: string;
  idTokenAlg: string;
  requireDpop: boolean;
  requirePar: boolean;
  deviceGrant: boolean;
  wallet: boolean;
  officialMobile: boolean;
  isPublic: boolean;
}

/** The entries of a one-per-line field: trimmed, without empty lines or repeats. */
export function lines(value: string | undefined): string[] {
  return [
    ...new Set(
      (value ?? '')
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter(Boolean),
    ),
  ];
}

export function valuesFromForm(form: ClientForm): ClientFormValues {
  return {
    name: form.name ?? '',
    siteUrl: form.site_url ?? '',
    logoUri: form.logo_uri ?? '',
    redirectUris: form.redirect_uris ?? '',
    postLogoutRedirectUris: form.post_logout_redirect_uris ?? '',
    backchannelLogoutUri: form.backchannel_logout_uri ?? '',
    idTokenAlg: form.id_token_alg ?? '',
    requireDpop: form.require_dpop !== undefined,
    requirePar: form.require_par !== undefined,
    deviceGrant: form.device_grant !== undefined,
    wallet: form.wallet !== undefined,
    officialMobile: form.official_mobile !== undefined,
    isPublic: form.is_public !== undefined,
  };
}

export function valuesFromClient(client: ClientView): ClientFormValues {
  return {
    name: client.name,
    siteUrl: client.site_url,
    logoUri: client.logo_uri ?? '',
    redirectUris: client.redirect_uris.join('\n'),
    postLogoutRedirectUris: client.post_logout_redirect_uris.join('\n'),
    backchannelLogoutUri: client.backchannel_logout_uri ?? '',
    idTokenAlg: client.id_token_signed_response_alg,
    requireDpop: client.dpop_bound_access_tokens,
    requirePar: client.require_pushed_authorization_requests,
    deviceGrant: client.device_grant,
    wallet: client.wallet,
    officialMobile: client.official_mobile,
    isPublic: client.token_endpoint_auth_method === 'none',
  };
}

/** What `idp clients create` would be given for this form; the service validates it as for the CLI. */
export function createInput(form: ClientForm): CreateClientInput {
  const values = valuesFromForm(form);
  return {
    name: values.name,
    siteUrl: values.siteUrl,
    redirectUris: lines(values.redirectUris),
    postLogoutRedirectUris: lines(values.postLogoutRedirectUris),
    logoUri: values.logoUri.trim() || undefined,
    backchannelLogoutUri: values.backchannelLogoutUri.trim() || undefined,
    idTokenAlg: (values.idTokenAlg || undefined) as CreateClientInput['idTokenAlg'],
    requireDpop: values.requireDpop,
    requirePar: values.requirePar,
    deviceGrant: values.deviceGrant,
    wallet: values.wallet,
    officialMobile: values.officialMobile,
    isPublic: values.isPublic,
  };
}

/**
 * What `idp clients update` would be given to bring the client to this form: only what differs,
 * the lists as removals and additions, an emptied optional address as `''` (which removes it).
 */
export function updateInput(form: ClientForm, client: ClientView): UpdateClientInput {
  const values = valuesFromForm(form);
  const input: UpdateClientInput = {};
  if (values.name !== client.name) input.name = values.name;
  if (values.siteUrl.trim() !== client.site_url) input.siteUrl = values.siteUrl;
  if (values.logoUri.trim() !== (client.logo_uri ?? '')) input.logoUri = values.logoUri;
  if (values.backchannelLogoutUri.trim() !== (client.backchannel_logout_uri ?? ''))
    input.backchannelLogoutUri = values.backchannelLogoutUri;
  // A form without the field (not the console's own) leaves the algorithm as it is.
  if (form.id_token_alg !== undefined && values.idTokenAlg !== client.id_token_signed_response_alg)
    input.idTokenAlg = values.idTokenAlg as UpdateClientInput['idTokenAlg'];
  if (values.requireDpop !== client.dpop_bound_access_tokens) input.requireDpop = values.requireDpop;
  if (values.requirePar !== client.require_pushed_authorization_requests)
    input.requirePar = values.requirePar;
  if (values.deviceGrant !== client.device_grant) input.deviceGrant = values.deviceGrant;
  if (values.wallet !== client.wallet) input.wallet = values.wallet;
  if (values.officialMobile !== client.official_mobile) input.officialMobile = values.officialMobile;
  const uris = lines(values.redirectUris);
  input.removeRedirectUris = client.redirect_uris.filter((uri) => !uris.includes(uri));
  input.addRedirectUris = uris.filter((uri) => !client.redirect_uris.includes(uri));
  const logout = lines(values.postLogoutRedirectUris);
  input.removePostLogoutRedirectUris = client.post_logout_redirect_uris.filter(
    (uri) => !logout.includes(uri),
  );
  input.addPostLogoutRedirectUris = logout.filter((uri) => !client.post_logout_redirect_uris.includes(uri));
  return input;
}
