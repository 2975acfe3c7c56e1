import type { FastifyPluginAsync } from 'fastify';
import { sendStatic } from '../assets/assets.routes.js';
import { versioned } from '../assets/stylesheet.js';

/** public/developers.css: the portal's tables, secrets and forms, over the pages' stylesheet. */
export const developersStylesheet = versioned('developers.css', '/assets/developers.css');

/**
 * public/developers.js: the copy button of a secret or token the portal shows once (as the
 * recovery codes' button on the security page). The value is in a read-only field the person can
 * select and copy without it.
 */
export const developersScript = versioned('developers.js', '/assets/developers.js');

const YEAR = 'public, max-age=31536000, immutable';

/** The portal's stylesheet and script, versioned in their URLs and cached for a year. */
export const developersAssetRoutes: FastifyPluginAsync = async (app) => {
  for (const [asset, type, description] of [
    [developersStylesheet(), 'text/css; charset=utf-8', "The developer portal's stylesheet"],
    [
      developersScript(),
      'text/javascript; charset=utf-8',
      'The copy button of a secret or token the developer portal shows once',
    ],
  ] as const) {
    app.get(
      asset.path,
      { config: { auth: 'public', description, staticAsset: true } },
      async (request, reply) => sendStatic(request, reply, asset, { type, cacheControl: YEAR }),
    );
  }
};
