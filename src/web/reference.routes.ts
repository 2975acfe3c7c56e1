import type { FastifyPluginAsync } from 'fastify';
import { sendStatic } from './assets/assets.routes.js';
import {
  referenceScript,
  referenceStylesheet,
  swaggerUiBundle,
  swaggerUiStylesheet,
} from './assets/reference-assets.js';
import { renderPage } from './pages.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';

/**
 * The API reference at /api/v1/docs: Swagger UI (swagger-ui-dist, served from this origin) renders
 * the OpenAPI document of /api/v1/openapi.json, grouped by its tags, inside the pages' layout and
 * under their CSP: no script or style from another origin, nothing inline.
 */
export const referenceRoutes: FastifyPluginAsync = async (app) => {
  const assets = [
    [swaggerUiBundle, 'text/javascript; charset=utf-8', "Swagger UI's renderer, for the API reference"],
    [swaggerUiStylesheet, 'text/css; charset=utf-8', "Swagger UI's stylesheet, for the API reference"],
    [referenceScript, 'text/javascript; charset=utf-8', 'Starts Swagger UI on the OpenAPI document'],
    [referenceStylesheet, 'text/css; charset=utf-8', "The API reference page's layout"],
  ] as const;
  for (const [asset, type, description] of assets) {
    app.get(
      asset.path,
      { config: { auth: 'public', description, staticAsset: true } },
      async (request, reply) =>
        sendStatic(request, reply, asset.load(), {
          type,
          cacheControl: 'public, max-age=31536000, immutable',
        }),
    );
  }

  app.get(
    '/api/v1/docs',
    {
      config: {
        auth: 'public',
        description: 'The API reference, readable: every route from the OpenAPI document, grouped by feature',
      },
      schema: { hide: true },
    },
    async (_request, reply) =>
      renderPage(reply, 'reference', {
        openapiUrl: OPENAPI_PATH,
        swaggerUiJs: swaggerUiBundle.load().href,
        swaggerUiCss: swaggerUiStylesheet.load().href,
        referenceJs: referenceScript.load().href,
        referenceCss: referenceStylesheet.load().href,
      }),
  );
};
