import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../context.js';
import { bearerContext, requireBearer } from '../../http/bearer-auth.js';
import { premiumStatusSchema } from './premium.schemas.js';
import { getPremiumStatus } from './premium.service.js';

/** GET /api/v1/premium/status. */
export const premiumRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    '/api/v1/premium/status',
    {
      config: {
        auth: 'bearer',
        description:
          "The token owner's premium status: {ok, active, expires_at, billing_period, days_left, wallet_balance}",
      },
      schema: { response: { 200: premiumStatusSchema } },
      preHandler: requireBearer(deps),
    },
    async (request, reply) => {
      // Personal data: no cache may keep it. Any valid token of the user will do (no scope needed),
      // and only the token's owner is ever read: no parameter selects another user.
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return getPremiumStatus(deps.db, deps.ctx, bearerContext(request).userId);
    },
  );
};
