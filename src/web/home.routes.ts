import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../context.js';
import { prefersHtml } from '../lib/accept.js';
import { getPlatformStatus, isBuiltInStatusMessage } from '../modules/platform/platform.service.js';
import { renderPage } from './pages.js';

const directorySchema = z.object({
  ok: z.literal(true),
  message: z.string(),
  catalogue: z.string(),
  reference: z.string(),
  openapi: z.string(),
  openid_configuration: z.string(),
});

/**
 * The landing page at `/`, for browsers: the service's name, the ways in (sign-in, the account
 * page), the platform status and the developers' links. Any other caller (curl's `*\/*`, an API
 * client's `application/json`, no `Accept`) is more likely a developer trying the service out
 * than a browser, so it gets a small JSON document saying where the API is described.
 */
export const homeRoutes: FastifyPluginAsync<Deps> = async (app, { db, ctx }) => {
  const base = ctx.config.PUBLIC_URL;
  const directory = {
    ok: true as const,
    message:
      "/ is the home page, for people in a browser (Accept: text/html). The API's routes are listed at /api/v1/ and described at /api/v1/docs.",
    catalogue: `${base}/api/v1/`,
    reference: `${base}/api/v1/docs`,
    openapi: `${base}/api/v1/openapi.json`,
    openid_configuration: `${base}/.well-known/openid-configuration`,
  };
  app.withTypeProvider<ZodTypeProvider>().get(
    '/',
    {
      config: {
        auth: 'browser',
        pageByAccept: true,
        description:
          'Landing page for browsers (Accept: text/html); other callers get JSON links to the API catalogue and reference',
      },
      schema: { response: { 200: directorySchema } },
    },
    async (request, reply) => {
      if (!prefersHtml(request.headers.accept)) {
        // The same URL answers a page or this document by Accept: a cache must keep them apart.
        reply.header('vary', 'Accept');
        return directory;
      }
      const status = await getPlatformStatus(db, ctx);
      return renderPage(reply, 'home', {
        status: status.status,
        // The operator's own words are shown as written; the service's sentences are translated.
        message: isBuiltInStatusMessage(status.message) ? null : status.message,
        incidents: status.incidents,
      });
    },
  );
};
