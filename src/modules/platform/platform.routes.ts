import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../context.js';
import { Unavailable } from '../../lib/errors.js';
import { healthSchema, platformStatusSchema } from './platform.schemas.js';
import { checkDatabase, getPlatformStatus } from './platform.service.js';

export const platformRoutes: FastifyPluginAsync<Deps> = async (app, { db, ctx }) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  // A draining instance still serves what arrives on its open connections, but is not ready: a
  // load balancer's probe takes it out of the pool before its connections close.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });

  routes.get(
    '/api/v1/platform/status',
    {
      config: { auth: 'public', description: 'Platform status: overall state, open incidents, services' },
      schema: { response: { 200: platformStatusSchema } },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-cache');
      return getPlatformStatus(db, ctx);
    },
  );

  routes.get(
    '/health/live',
    {
      config: { auth: 'public', description: 'Liveness: the process is up' },
      schema: { response: { 200: healthSchema } },
    },
    async () => ({ ok: true as const, status: 'live' }),
  );

  routes.get(
    '/health/ready',
    {
      config: { auth: 'public', description: 'Readiness: the database answers' },
      schema: { response: { 200: healthSchema } },
    },
    async () => {
      if (draining) throw new Unavailable('The server is shutting down; it takes no new work.');
      await checkDatabase(db);
      return { ok: true as const, status: 'ready' };
    },
  );
};
