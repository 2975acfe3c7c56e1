import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteRegistry } from '../http/route-registry.js';
import { renderPage } from './pages.js';

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

interface OpenApiOperation {
  summary?: string;
  tags?: string[];
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string }>;
  requestBody?: {
    content?: Record<
      string,
      { schema?: { properties?: Record<string, { type?: unknown }>; required?: string[] } }
    >;
  };
  responses?: Record<string, unknown>;
}

/** The OpenAPI document's operations as the reference page lists them. */
function referenceOperations(document: unknown) {
  const paths = (document as { paths?: Record<string, Record<string, OpenApiOperation>> }).paths ?? {};
  return Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => method !== 'head')
      .map(([method, operation]) => {
        const body = Object.values(operation.requestBody?.content ?? {})[0]?.schema;
        return {
          method: method.toUpperCase(),
          path,
          anchor: `${method}-${path}`.replace(/[^A-Za-z0-9-]+/g, '-'),
          summary: operation.summary ?? '',
          auth: operation.tags?.[0] ?? 'public',
          parameters: (operation.parameters ?? [])
            .filter((parameter) => parameter.in === 'query')
            .map((parameter) => ({
              name: parameter.name,
              required: parameter.required === true,
              description: parameter.description ?? '',
            })),
          body: Object.entries(body?.properties ?? {}).map(([name, property]) => ({
            name,
            required: body?.required?.includes(name) ?? false,
            type: typeof property.type === 'string' ? property.type : '',
          })),
          responses: Object.keys(operation.responses ?? {}),
        };
      }),
  );
}

/**
 * The route catalogue (CONTRACT.md §6), built from the routes as Fastify registered them, and the
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
  routes.get(
    '/api/v1/docs',
    {
      config: {
        auth: 'public',
        description: 'The API reference, readable: every route from the OpenAPI document',
      },
      schema: { hide: true },
    },
    async (_request, reply) =>
      renderPage(reply, 'reference', { operations: referenceOperations(app.swagger()) }),
  );
  routes.get(
    '/api/v1/openapi.json',
    {
      config: { auth: 'public', description: 'The OpenAPI 3.1 description of this API' },
      schema: { hide: true },
    },
    async () => app.swagger(),
  );
};
