import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../context.js';
import { sendStatic } from '../assets/assets.routes.js';
import { consoleAuditRoutes } from './audit.routes.js';
import { consoleClientsRoutes } from './clients.routes.js';
import { consoleStylesheet } from './console-pages.js';
import { consolePasskeyRoutes } from './console-passkey.routes.js';
import { consoleDashboardRoutes } from './dashboard.routes.js';
import { consoleEnterRoutes } from './enter.routes.js';
import { consolePlatformRoutes } from './platform.routes.js';
import { consoleProvidersRoutes } from './providers.routes.js';
import { consoleUsersRoutes } from './users.routes.js';

/**
 * The operators' console under /admin: entering and leaving, then one plugin per area. Who may call
 * each route is its `console` declaration, enforced by console-guard.ts.
 */
export const consoleRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const css = consoleStylesheet();
  app.get(
    css.path,
    { config: { auth: 'public', description: "The console's stylesheet", staticAsset: true } },
    async (request, reply) =>
      sendStatic(request, reply, css, {
        type: 'text/css; charset=utf-8',
        cacheControl: 'public, max-age=31536000, immutable',
      }),
  );
  await app.register(consoleEnterRoutes, deps);
  await app.register(consolePasskeyRoutes, deps);
  await app.register(consoleDashboardRoutes, deps);
  await app.register(consoleUsersRoutes, deps);
  await app.register(consoleClientsRoutes, deps);
  await app.register(consoleProvidersRoutes, deps);
  await app.register(consoleAuditRoutes, deps);
  await app.register(consolePlatformRoutes, deps);
};
