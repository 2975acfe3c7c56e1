import { importPKCS8 } from 'jose';
import { z } from 'zod';
import type { UpstreamKind } from '../../db/schema-upstream.js';
import { isLoopbackHost } from '../../lib/redirect-uri.js';
import { ClientInputError, parseClientInput } from '../clients/client-input.js';

/*
 * What an operator may set on a provider (`idp providers add|update`, the console's form), checked
 * in one place. Each kind has the endpoints of the real provider as its defaults; `--issuer` (and
 * GitHub's `--api-url`) point it elsewhere, which is how tests reach a stand-in on loopback.
 */

export const UPSTREAM_KINDS = [
  'oidc',
  'github',
  'google',
  'apple',
] as const satisfies readonly UpstreamKind[];

export const KIND_DEFAULTS: Record<
  UpstreamKind,
  { displayName?: string; issuer?: string; apiUrl?: string; scopes: string }
> = {
  oidc: { scopes: 'openid email profile' },
  google: { displayName: 'Google', issuer: 'https://accounts.google.com', scopes: 'openid email profile' },
  // Apple sends the name and e-mail only when asked for them, and only with response_mode=form_post.
  apple: { displayName: 'Apple', issuer: 'https://appleid.apple.com', scopes: 'openid name email' },
  // GitHub is OAuth 2.0 without OpenID: the profile and addresses come from its REST API.
  github: {
    displayName: 'GitHub',
    issuer: 'https://github.com',
    apiUrl: 'https://api.github.com',
    scopes: 'read:user user:email',
  },
};

const nameSchema = z
  .string()
  .regex(
    /^[a-z][a-z0-9-]{1,31}$/,
    'name must be 2–32 characters: lowercase letters, digits, hyphens, a letter first',
  );

/**
 * https, or http on a loopback host (a provider run beside the service, as tests do). Kept as given:
 * an OpenID issuer is compared character for character (Auth0's ends in a slash, Google's does not).
 */
const endpointSchema = (what: string) =>
  z
    .string()
    .max(500, `${what} must be at most 500 characters`)
    .refine((text) => {
      try {
        const url = new URL(text);
        const plain = url.protocol === 'http:' && isLoopbackHost(url.hostname);
        return (url.protocol === 'https:' || plain) && !url.search && !url.hash && !url.username;
      } catch {
        return false;
      }
    }, `${what} must be an https URL without query or fragment (http only on a loopback host)`);

const text = (what: string, max: number) =>
  z.string().trim().min(1, `${what} must not be empty`).max(max, `${what} must be at most ${max} characters`);

const changeFields = {
  displayName: text('display name', 40).optional(),
  issuer: endpointSchema('issuer').optional(),
  apiUrl: endpointSchema('API URL').optional(),
  clientId: text('client id', 300).optional(),
  clientSecret: text('client secret', 1000).optional(),
  appleTeamId: z
    .string()
    .regex(/^[A-Z0-9]{10}$/, 'Apple team id must be 10 capital letters or digits')
    .optional(),
  appleKeyId: z
    .string()
    .regex(/^[A-Z0-9]{10}$/, 'Apple key id must be 10 capital letters or digits')
    .optional(),
  applePrivateKey: text('Apple private key', 4000).optional(),
  scopes: z
    .string()
    .trim()
    .regex(
      /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/,
      'scopes must be space-separated scope tokens',
    )
    .max(500)
    .optional(),
  enabled: z.boolean().optional(),
  trustAmr: z.boolean().optional(),
};

const addSchema = z.object({ name: nameSchema, kind: z.enum(UPSTREAM_KINDS), ...changeFields });
const updateSchema = z.object({ name: nameSchema, ...changeFields });

export type AddProviderInput = z.input<typeof addSchema>;
export type UpdateProviderInput = z.input<typeof updateSchema>;
export type ProviderSettings = z.output<typeof updateSchema>;

/** Settings only some kinds read: given to another kind they would be stored and never used. */
const KIND_ONLY_SETTINGS: ReadonlyArray<{
  field: keyof ProviderSettings;
  label: string;
  applies: (kind: UpstreamKind) => boolean;
}> = [
  { field: 'appleTeamId', label: 'Apple team id', applies: (kind) => kind === 'apple' },
  { field: 'appleKeyId', label: 'Apple key id', applies: (kind) => kind === 'apple' },
  { field: 'applePrivateKey', label: 'Apple private key', applies: (kind) => kind === 'apple' },
  { field: 'apiUrl', label: 'API URL', applies: (kind) => kind === 'github' },
  // Apple's client secret is a JWT the service signs with the key at each sign-in.
  { field: 'clientSecret', label: 'client secret', applies: (kind) => kind !== 'apple' },
];

/** Refuses, by field, what a provider of this kind does not use, when adding it and when changing it. */
export function refuseForeignSettings(kind: UpstreamKind, settings: Partial<ProviderSettings>): void {
  const problems: Record<string, string> = {};
  for (const { field, label, applies } of KIND_ONLY_SETTINGS)
    if (settings[field] !== undefined && !applies(kind))
      problems[field] = `${label} does not apply to a provider of kind ${kind}`;
  if (Object.keys(problems).length > 0) throw new ClientInputError(problems);
}

/** The settings of a new provider, with its kind's defaults; every field a kind needs present. */
export async function parseNewProvider(input: unknown): Promise<z.output<typeof addSchema>> {
  const data = parseClientInput(addSchema, input);
  refuseForeignSettings(data.kind, data);
  const defaults = KIND_DEFAULTS[data.kind];
  const settings = {
    ...data,
    displayName: data.displayName ?? defaults.displayName,
    issuer: data.issuer ?? defaults.issuer,
    apiUrl: data.kind === 'github' ? (data.apiUrl ?? defaults.apiUrl) : undefined,
    scopes: data.scopes ?? defaults.scopes,
  };
  const missing: Record<string, string> = {};
  if (!settings.issuer) missing.issuer = 'issuer is required for a generic OpenID provider';
  if (!settings.displayName) missing.displayName = 'display name is required for a generic OpenID provider';
  if (!settings.clientId) missing.clientId = 'client id is required';
  if (data.kind === 'apple') {
    for (const field of ['appleTeamId', 'appleKeyId', 'applePrivateKey'] as const)
      if (!data[field])
        missing[field] =
          `${field === 'appleTeamId' ? 'team id' : field === 'appleKeyId' ? 'key id' : 'private key'} is required for Apple`;
  } else if (!data.clientSecret) missing.clientSecret = 'client secret is required';
  if (Object.keys(missing).length > 0) throw new ClientInputError(missing);
  await checkApplePrivateKey(settings.applePrivateKey);
  return settings;
}

/** The settings a change sets; what it leaves out stays. */
export async function parseProviderChange(input: unknown): Promise<z.output<typeof updateSchema>> {
  const data = parseClientInput(updateSchema, input);
  await checkApplePrivateKey(data.applePrivateKey);
  return data;
}

/** Apple's key must be the PKCS#8 P-256 key Apple gives (a .p8 file): refused now rather than at a sign-in. */
async function checkApplePrivateKey(pem: string | undefined): Promise<void> {
  if (pem === undefined) return;
  try {
    await importPKCS8(pem, 'ES256');
  } catch {
    throw new ClientInputError({
      applePrivateKey: 'Apple private key must be the PKCS#8 PEM of a P-256 key (the .p8 file Apple gives)',
    });
  }
}
