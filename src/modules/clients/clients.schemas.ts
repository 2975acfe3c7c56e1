import { z } from 'zod';
import {
  backchannelLogoutUriProblem,
  isLoopbackHost,
  logoUriProblem,
  postLogoutRedirectUriProblem,
  redirectUriProblem,
} from '../../lib/redirect-uri.js';
import {
  DEFAULT_SIGNING_ALGORITHM,
  SIGNING_ALGORITHMS,
  SIGNING_ALGORITHMS_TEXT,
  type SigningAlgorithm,
} from '../../lib/signing-algorithms.js';

const siteUrlSchema = z
  .string()
  .trim()
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
    } catch {
      return false;
    }
  }, 'site URL must be an absolute https URL (plain http is allowed on loopback hosts only)');

const clientNameSchema = z
  .string()
  .trim()
  .min(1, 'name must not be empty')
  .max(100, 'name must be at most 100 characters');

/** `id_token_signed_response_alg` (OIDC Registration §2): one of the algorithms we sign with. */
export const idTokenAlgSchema = z.enum(SIGNING_ALGORITHMS, {
  error: (issue) =>
    `id_token_signed_response_alg must be ${SIGNING_ALGORITHMS_TEXT} (spelled exactly), got "${String(issue.input)}"`,
});

/** A client may register at most 20 redirect URIs (also a check constraint, migrations/0045). */
export const MAX_REDIRECT_URIS = 20;

/**
 * Why a client may not have `count` redirect URIs, or null: at most 20, and at least one unless
 * the client may use the device grant, whose devices never receive a redirect (RFC 8628 §3; RFC
 * 7591 §2 asks redirect_uris of redirect-based flows only). Every door (the CLI, the console, the
 * portal, RFC 7591/7592 registration) goes through it; migrations/0045 holds the same rule.
 */
export function redirectUriCountProblem(count: number, deviceGrant: boolean): string | null {
  if (count > MAX_REDIRECT_URIS) return `a client may have at most ${MAX_REDIRECT_URIS} redirect URIs`;
  if (count === 0 && !deviceGrant)
    return 'at least one redirect URI is required, unless the client may use the device grant (RFC 8628)';
  return null;
}

/** At most 20 post-logout redirect URIs (also a check constraint, migrations/0025), none required. */
export const MAX_POST_LOGOUT_REDIRECT_URIS = 20;

const postLogoutRedirectUrisSchema = z
  .array(z.string().trim())
  .max(MAX_POST_LOGOUT_REDIRECT_URIS, `at most ${MAX_POST_LOGOUT_REDIRECT_URIS} post-logout redirect URIs`)
  .default([]);

export const createClientSchema = z
  .object({
    name: clientNameSchema,
    siteUrl: siteUrlSchema,
    redirectUris: z.array(z.string().trim()),
    postLogoutRedirectUris: postLogoutRedirectUrisSchema,
    wallet: z.boolean().default(false),
    officialMobile: z.boolean().default(false),
    requirePar: z.boolean().default(false),
    /** May use the device authorization grant (RFC 8628). */
    deviceGrant: z.boolean().default(false),
    idTokenAlg: idTokenAlgSchema.default(DEFAULT_SIGNING_ALGORITHM),
    /** No secret: `token_endpoint_auth_method: none` (RFC 7591 §2). */
    isPublic: z.boolean().default(false),
    requireDpop: z.boolean().default(false),
    backchannelLogoutUri: z.string().trim().optional(),
    logoUri: z.string().trim().optional(),
  })
  .superRefine((client, ctx) => {
    const logoProblem = client.logoUri === undefined ? null : logoUriProblem(client.logoUri);
    if (logoProblem) ctx.addIssue({ code: 'custom', message: logoProblem, path: ['logoUri'] });
    const problem =
      client.backchannelLogoutUri === undefined
        ? null
        : backchannelLogoutUriProblem(client.backchannelLogoutUri);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['backchannelLogoutUri'] });
    const count = redirectUriCountProblem(client.redirectUris.length, client.deviceGrant);
    if (count) ctx.addIssue({ code: 'custom', message: count, path: ['redirectUris'] });
    // Each of too many is not worth checking.
    for (const uri of count ? [] : client.redirectUris) {
      const problem = redirectUriProblem(uri, client.siteUrl);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['redirectUris'] });
    }
    for (const uri of client.postLogoutRedirectUris) {
      const problem = postLogoutRedirectUriProblem(uri);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['postLogoutRedirectUris'] });
    }
  });

export type CreateClientInput = z.input<typeof createClientSchema>;

/** A client as operators see it: never its secret or the secret's hash. */
export interface ClientView {
  client_id: string;
  name: string;
  site_url: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  wallet: boolean;
  official_mobile: boolean;
  /** RFC 9126 §6 client metadata. */
  require_pushed_authorization_requests: boolean;
  /** May use the device authorization grant (RFC 8628). */
  device_grant: boolean;
  id_token_signed_response_alg: SigningAlgorithm;
  /** RFC 7591 §2: `none` for a public client. */
  token_endpoint_auth_method: 'none' | 'client_secret_basic';
  /** RFC 9449 §5.2. */
  dpop_bound_access_tokens: boolean;
  /** OIDC Back-Channel Logout 1.0 §2.2; null when the client has none. */
  backchannel_logout_uri: string | null;
  /** RFC 7591 §2; null when the client has none. */
  logo_uri: string | null;
  disabled: boolean;
  created_at: string;
}

/**
 * A change to a client (`idp clients update`): only the given fields change. Redirect URIs and
 * post-logout redirect URIs are removed and added one by one; added ones obey the same rules as at
 * registration.
 */
export const updateClientSchema = z
  .object({
    name: clientNameSchema.optional(),
    /** A new site URL: every redirect URI the client keeps must suit it. */
    siteUrl: siteUrlSchema.optional(),
    wallet: z.boolean().optional(),
    officialMobile: z.boolean().optional(),
    requirePar: z.boolean().optional(),
    deviceGrant: z.boolean().optional(),
    requireDpop: z.boolean().optional(),
    disabled: z.boolean().optional(),
    idTokenAlg: idTokenAlgSchema.optional(),
    addRedirectUris: z.array(z.string().trim()).default([]),
    removeRedirectUris: z.array(z.string().trim()).default([]),
    addPostLogoutRedirectUris: z.array(z.string().trim()).default([]),
    removePostLogoutRedirectUris: z.array(z.string().trim()).default([]),
    /** A new back-channel logout URI; `''` removes it. */
    backchannelLogoutUri: z.string().trim().optional(),
    /** A new logo URI; `''` removes it. */
    logoUri: z.string().trim().optional(),
  })
  .superRefine((input, ctx) => {
    const logo = input.logoUri === undefined || input.logoUri === '' ? null : logoUriProblem(input.logoUri);
    if (logo) ctx.addIssue({ code: 'custom', message: logo, path: ['logoUri'] });
    const uri = input.backchannelLogoutUri;
    const problem = uri === undefined || uri === '' ? null : backchannelLogoutUriProblem(uri);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['backchannelLogoutUri'] });
    for (const uri of input.addRedirectUris) {
      if (input.removeRedirectUris.includes(uri))
        ctx.addIssue({
          code: 'custom',
          message: `redirect URI "${uri}" is both added and removed`,
          path: ['addRedirectUris'],
        });
    }
    for (const uri of input.addPostLogoutRedirectUris) {
      if (input.removePostLogoutRedirectUris.includes(uri))
        ctx.addIssue({
          code: 'custom',
          message: `post-logout redirect URI "${uri}" is both added and removed`,
          path: ['addPostLogoutRedirectUris'],
        });
    }
  });

export type UpdateClientInput = z.input<typeof updateClientSchema>;
