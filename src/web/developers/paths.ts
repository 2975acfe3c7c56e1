import type { FastifyRequest } from 'fastify';
import { z } from 'zod';

/** The developer portal's pages, under the fixed path `/developers`. */
export const DEVELOPERS_PATH = '/developers';
export const NEW_APP_PATH = '/developers/apps/new';
export const APPS_PATH = '/developers/apps';
export const TOKENS_PATH = '/developers/tokens';

/** An application's page. */
export const appPath = (clientId: string) => `${APPS_PATH}/${encodeURIComponent(clientId)}`;

/** The `:client_id` of an application's routes (a longer one is no client's). */
export const appParams = z.object({ client_id: z.string().max(200) });

/** Where a refused POST's language switch and re-authentication return: the application's page. */
export const backToApp = (request: FastifyRequest) =>
  appPath((request.params as { client_id?: string }).client_id ?? '');

/** A form POST of the application's page: CSRF, the sign-in limit, back to the page. */
export const appPost = (description: string, extra: { reauth?: 'required'; revokes?: boolean } = {}) => ({
  auth: 'browser' as const,
  description,
  csrf: true,
  rateLimit: 'signin' as const,
  switchBase: backToApp,
  ...extra,
});
