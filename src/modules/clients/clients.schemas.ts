import { z } from 'zod';
import { isLoopbackHost, redirectUriProblem } from '../../lib/redirect-uri.js';

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

export const createClientSchema = z
  .object({
    name: z.string().trim().min(1, 'name must not be empty').max(100, 'name must be at most 100 characters'),
    siteUrl: siteUrlSchema,
    redirectUris: z
      .array(z.string().trim())
      .min(1, 'at least one redirect URI is required')
      .max(20, 'at most 20 redirect URIs'),
    wallet: z.boolean().default(false),
    officialMobile: z.boolean().default(false),
  })
  .superRefine((client, ctx) => {
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
  disabled: boolean;
  created_at: string;
}
