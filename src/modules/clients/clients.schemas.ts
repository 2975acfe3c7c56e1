import { z } from 'zod';
import { backchannelLogoutUriProblem, isLoopbackHost, redirectUriProblem } from '../../lib/redirect-uri.js';

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

/** A client may register from 1 to 20 redirect URIs (also a check constraint on clients.redirect_uris). */
export const MAX_REDIRECT_URIS = 20;

export const createClientSchema = z
  .object({
    name: clientNameSchema,
    siteUrl: siteUrlSchema,
    redirectUris: z
      .array(z.string().trim())
      .min(1, 'at least one redirect URI is required')
      .max(MAX_REDIRECT_URIS, `at most ${MAX_REDIRECT_URIS} redirect URIs`),
    wallet: z.boolean().default(false),
    officialMobile: z.boolean().default(false),
    backchannelLogoutUri: z.string().trim().optional(),
  })
  .superRefine((client, ctx) => {
    const problem =
      client.backchannelLogoutUri === undefined
        ? null
        : backchannelLogoutUriProblem(client.backchannelLogoutUri);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['backchannelLogoutUri'] });
    for (const uri of client.redirectUris) {
      const problem = redirectUriProblem(uri, client.siteUrl);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['redirectUris'] });
    }
  });

export type CreateClientInput = z.input<typeof createClientSchema>;

/** A client as operators see it: never its secret or the secret's hash. */
export interface ClientView {
  client_id: string;
  name: string;
  site_url: string;
  redirect_uris: string[];
  wallet: boolean;
  official_mobile: boolean;
  /** OIDC Back-Channel Logout 1.0 §2.2; null when the client has none. */
  backchannel_logout_uri: string | null;
  disabled: boolean;
  created_at: string;
}

/**
 * A change to a client (`idp clients update`): only the given fields change. Redirect URIs are
 * removed and added one by one; added ones obey the same rules as at registration.
 */
export const updateClientSchema = z
  .object({
    name: clientNameSchema.optional(),
    wallet: z.boolean().optional(),
    officialMobile: z.boolean().optional(),
    disabled: z.boolean().optional(),
    addRedirectUris: z.array(z.string().trim()).default([]),
    removeRedirectUris: z.array(z.string().trim()).default([]),
    /** A new back-channel logout URI; `''` removes it. */
    backchannelLogoutUri: z.string().trim().optional(),
  })
  .superRefine((input, ctx) => {
    const uri = input.backchannelLogoutUri;
    const problem = uri === undefined || uri === '' ? null : backchannelLogoutUriProblem(uri);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['backchannelLogoutUri'] });
    for (const uri of input.addRedirectUris) {
      if (input.removeRedirectUris.includes(uri))
        ctx.addIssue({ code: 'custom', message: `redirect URI "${uri}" is both added and removed` });
    }
  });

export type UpdateClientInput = z.input<typeof updateClientSchema>;
