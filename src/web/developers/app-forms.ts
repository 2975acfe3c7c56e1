import type {
  ClientView,
  CreateClientInput,
  UpdateClientInput,
} from '../../modules/clients/clients.schemas.js';
import {
  type ClientForm,
  type ClientFormValues,
  createInput,
  updateInput,
  valuesFromClient,
  valuesFromForm,
} from '../console/clients-forms.js';
import { formBody, text } from '../page-forms.js';

/**
 * The portal's application form: the console's fields (clients-forms.ts, the settings of `idp
 * clients create|update`) but for the rights only operators grant (the wallet, the official mobile
 * app), and the kind of client as a choice: `kind=public` or `confidential`.
 */
export const appForm = formBody({
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
  kind: text,
});

type AppForm = Omit<ClientForm, 'wallet' | 'official_mobile' | 'is_public'> & { kind?: string };

/** The console form's shape of this one (the rights left out, so never asked for). */
function asClientForm({ kind, ...form }: AppForm): ClientForm {
  return { ...form, ...(kind === 'public' ? { is_public: '1' } : {}) };
}

/** The service's input names the page's fields go by: the rights it never sends are no fields of it. */
function withoutRights<T extends { wallet?: unknown; officialMobile?: unknown }>(input: T) {
  const { wallet: _wallet, officialMobile: _mobile, ...rest } = input;
  return rest;
}

export function appValuesFromForm(form: AppForm): ClientFormValues {
  return valuesFromForm(asClientForm(form));
}

export function appValuesFromClient(client: ClientView): ClientFormValues {
  return valuesFromClient(client);
}

/** What `idp clients create` would be given for this form, without the operators' rights. */
export function appCreateInput(form: AppForm): CreateClientInput {
  return withoutRights(createInput(asClientForm(form)));
}

/** What `idp clients update` would be given to bring the app to this form: only what differs. */
export function appUpdateInput(form: AppForm, client: ClientView): UpdateClientInput {
  return withoutRights(updateInput(asClientForm(form), client));
}
