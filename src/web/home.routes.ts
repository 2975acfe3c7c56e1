import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../context.js';
import { noRoute } from '../http/error-handler.js';
import { prefersHtml } from '../lib/accept.js';
import { getPlatformStatus, isBuiltInStatusMessage } from '../modules/platform/platform.service.js';
import { renderPage } from './pages.js';

/**
 * The landing page at `/`, for browsers: the service's name, the ways in (sign-in, the account
 * page), the platform status and the developers' links. An API client (no `Accept` preferring
 * text/html) gets the JSON 404 of a path no route serves, as before the page existed.
 */
export const homeRoutes: FastifyPluginAsync<Deps> = async (app, { db, ctx }) => {
  app.get(
    '/',
    {
      config: {
        auth: 'browser',
        pageByAccept: true,
        description: 'Landing page for browsers (Accept: text/html); API clients get 404 not_found',
      },
    },
    async (request, reply) => {
      if (!prefersHtml(request.headers.accept)) throw noRoute(request.method);
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
