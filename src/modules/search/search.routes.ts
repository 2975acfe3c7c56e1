import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../context.js';
import { searchQuerySchema, searchResponseSchema } from './search.schemas.js';
import { searchUsers } from './search.service.js';

/** GET /api/users/search. */
export const searchRoutes: FastifyPluginAsync<Deps> = async (app, { db, ctx }) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    '/api/users/search',
    {
      config: {
        auth: 'public',
        description:
          'User search: q (1–64 characters), username=1 (usernames only), limit (default 20, max 50)',
      },
      schema: { querystring: searchQuerySchema, response: { 200: searchResponseSchema } },
    },
    async (request, reply) => {
      // The same answer for every caller and no private field: shared caches may keep it briefly.
      reply.header('cache-control', 'public, max-age=30');
      return searchUsers(db, ctx, request.query);
    },
  );
};
