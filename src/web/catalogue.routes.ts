import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteRegistry } from '../http/route-registry.js';
import { OPENAPI_PATH, referenceRoutes } from './reference.routes.js';

const catalogueSchema = z.object({
  ok: z.literal(true),
  version: z.literal('v1'),
  routes: z.array(
    z.object({
      method: z.string(),
      path: z.string(),
      auth: z.enum(['public', 'bearer', 'client', 'browser', 'mobile']),
      description: z.string(),
    }),
  ),
});

/**
 * The route catalogue, built from the routes as Fastify registered them, and the
 * OpenAPI 3.1 document, built by @fastify/swagger from the same routes' zod schemas.
 */
export const catalogueRoutes: FastifyPluginAsync<{ registry: RouteRegistry }> = async (app, { registry }) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  for (const path of ['/api/v1/', '/api/v1/index.php']) {
    routes.get(
      path,
      {
        config: { auth: 'public', description: 'This catalogue of every route' },
        schema: { response: { 200: catalogueSchema } },
      },
      async () => ({ ok: true as const, version: 'v1' as const, routes: [...registry.list()] }),
    );
  }
  await app.register(referenceRoutes);
  routes.get(
    OPENAPI_PATH,
    {
      config: { auth: 'public', description: 'The OpenAPI 3.1 description of this API' },
      schema: { hide: true },
    },
    async () => app.swagger(),
  );
};
