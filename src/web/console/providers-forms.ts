import type { UpstreamKind } from '../../db/schema-upstream.js';
import type { AddProviderInput, UpdateProviderInput } from '../../modules/upstream/provider-settings.js';
import type { ProviderView } from '../../modules/upstream/providers.service.js';
import type { Locale } from '../i18n/index.js';
import { formBody, text } from '../page-forms.js';
import { consoleTexts } from './i18n/index.js';

/**
 * The console's provider forms: the settings `idp providers add|update` has, each a text field,
 * secrets write-only (never shown, a blank one keeps what is stored), checkboxes that a browser
 * sends only when ticked.
 */
export const providerForm = formBody({
  csrf_token: text,
  name: text,
  kind: text,
  display_name: text,
  issuer: text,
  api_url: text,
  client_id: text,
  client_secret: text,
  apple_team_id: text,
  apple_key_id: text,
  apple_private_key: text,
  scopes: text,
  enabled: text,
  trust_amr: text,
});

export type ProviderForm = {
  [K in
    | 'name'
    | 'kind'
    | 'display_name'
    | 'issuer'
    | 'api_url'
    | 'client_id'
    | 'client_secret'
    | 'apple_team_id'
    | 'apple_key_id'
    | 'apple_private_key'
    | 'scopes'
    | 'enabled'
    | 'trust_amr']?: string;
};

/** The form as its fields show it again: text as typed, boxes ticked or not; never a secret. */
export interface ProviderFormValues {
  name: string;
  kind: string;
  displayName: string;
  issuer: string;
  apiUrl: string;
  clientId: string;
  appleTeamId: string;
  appleKeyId: string;
  scopes: string;
  enabled: boolean;
  trustAmr: boolean;
}

/** A provider as its page shows it: what operators see (ProviderView) and Apple's two ids. */
export type ShownProvider = ProviderView & { apple_team_id: string | null; apple_key_id: string | null };

/** The add form's values before anything is typed: enabled, as `idp providers add` adds. */
export const NEW_PROVIDER_VALUES: ProviderFormValues = {
  name: '',
  kind: '',
  displayName: '',
  issuer: '',
  apiUrl: '',
  clientId: '',
  appleTeamId: '',
  appleKeyId: '',
  scopes: '',
  enabled: true,
  trustAmr: false,
};

export function valuesFromForm(form: ProviderForm): ProviderFormValues {
  return {
    name: form.name ?? '',
    kind: form.kind ?? '',
    displayName: form.display_name ?? '',
    issuer: form.issuer ?? '',
    apiUrl: form.api_url ?? '',
    clientId: form.client_id ?? '',
    appleTeamId: form.apple_team_id ?? '',
    appleKeyId: form.apple_key_id ?? '',
    scopes: form.scopes ?? '',
    enabled: form.enabled !== undefined,
    trustAmr: form.trust_amr !== undefined,
  };
}

export function valuesFromProvider(provider: ShownProvider): ProviderFormValues {
  return {
    name: provider.name,
    kind: provider.kind,
    displayName: provider.display_name,
    issuer: provider.issuer,
    apiUrl: provider.api_url ?? '',
    clientId: provider.client_id,
    appleTeamId: provider.apple_team_id ?? '',
    appleKeyId: provider.apple_key_id ?? '',
    scopes: provider.scopes,
    enabled: provider.enabled,
    trustAmr: provider.trust_amr,
  };
}

/** An optional field: empty means the kind's default (or, for a secret, none given). */
const given = (value: string | undefined) => (value?.trim() ? value : undefined);

/**
 * What `idp providers add` would be given for this form. The form shows every kind's fields, so
 * those of other kinds are left out: GitHub's API URL, Apple's ids and key, a secret for Apple.
 */
export function addInput(form: ProviderForm): AddProviderInput {
  const kind = (form.kind ?? '') as UpstreamKind;
  return {
    name: (form.name ?? '').trim(),
    kind,
    displayName: given(form.display_name),
    issuer: given(form.issuer),
    apiUrl: kind === 'github' ? given(form.api_url) : undefined,
    clientId: given(form.client_id),
    clientSecret: kind === 'apple' ? undefined : given(form.client_secret),
    appleTeamId: kind === 'apple' ? given(form.apple_team_id)?.trim() : undefined,
    appleKeyId: kind === 'apple' ? given(form.apple_key_id)?.trim() : undefined,
    applePrivateKey: kind === 'apple' ? given(form.apple_private_key) : undefined,
    scopes: given(form.scopes),
    enabled: form.enabled !== undefined,
    trustAmr: form.trust_amr !== undefined,
  };
}

/**
 * What `idp providers update` would be given to bring the provider to this form: only what
 * differs; a secret or key only when one was typed (blank keeps the stored one). A field the
 * form lacks (not the console's own form) leaves its setting as it is.
 */
export function changeInput(form: ProviderForm, provider: ShownProvider): UpdateProviderInput {
  const input: UpdateProviderInput = { name: provider.name };
  const differs = (value: string | undefined, current: string | null) =>
    value !== undefined && value.trim() !== (current ?? '');
  if (differs(form.display_name, provider.display_name)) input.displayName = form.display_name;
  if (differs(form.issuer, provider.issuer)) input.issuer = form.issuer?.trim();
  if (differs(form.client_id, provider.client_id)) input.clientId = form.client_id;
  if (differs(form.scopes, provider.scopes)) input.scopes = form.scopes;
  if (provider.kind === 'github' && differs(form.api_url, provider.api_url))
    input.apiUrl = form.api_url?.trim();
  if (provider.kind === 'apple') {
    if (differs(form.apple_team_id, provider.apple_team_id)) input.appleTeamId = form.apple_team_id?.trim();
    if (differs(form.apple_key_id, provider.apple_key_id)) input.appleKeyId = form.apple_key_id?.trim();
    input.applePrivateKey = given(form.apple_private_key);
  } else {
    input.clientSecret = given(form.client_secret);
  }
  // A box is sent only when ticked.
  const trustAmr = form.trust_amr !== undefined;
  if (trustAmr !== provider.trust_amr) input.trustAmr = trustAmr;
  return input;
}

/** Whether a change input changes anything beyond naming its provider. */
export function changesSomething(input: UpdateProviderInput): boolean {
  return Object.entries(input).some(([key, value]) => key !== 'name' && value !== undefined);
}

/** How the provider settings word each problem (src/modules/upstream/provider-settings.ts), by kind of problem. */
const PROBLEMS: Array<[RegExp, string]> = [
  [/^name must be 2/, 'name'],
  [/^a provider named .* already exists$/, 'taken'],
  [/is required for a generic OpenID provider$/, 'requiredOidc'],
  [/is required for Apple$/, 'requiredApple'],
  [/( is required| must not be empty)$/, 'required'],
  [/must be an https URL/, 'https'],
  [/must be 10 capital letters or digits$/, 'appleId'],
  [/PKCS#8/, 'appleKey'],
  [/space-separated scope tokens$/, 'scopes'],
  [/^the name typed does not match/, 'confirm'],
];

/** A problem of a field as the page shows it; one of no known kind stays in English, marked so. */
export function providerProblem(
  field: string,
  message: string,
  locale: Locale,
): { text: string; lang: Locale } {
  const c = consoleTexts(locale).providers;
  // The kind is a choice: zod words its refusal of any other value itself.
  if (field === 'kind') return { text: c.problems.kind as string, lang: locale };
  const max = /at most (\d+) characters$|<=\s*(\d+) characters$/.exec(message);
  if (max) return { text: c.tooLong(Number(max[1] ?? max[2])), lang: locale };
  const known = PROBLEMS.find(([pattern]) => pattern.test(message));
  if (known) return { text: c.problems[known[1]] as string, lang: locale };
  return { text: message, lang: 'en' };
}

/** Every field's problem as the page shows it. */
export function providerProblems(
  errors: Readonly<Record<string, string>>,
  locale: Locale,
): Record<string, { text: string; lang: Locale }> {
  return Object.fromEntries(
    Object.entries(errors).map(([field, message]) => [field, providerProblem(field, message, locale)]),
  );
}
