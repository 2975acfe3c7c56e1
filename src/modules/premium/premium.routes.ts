import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../app.js';

/** GET /api/v1/premium/status. */
export const premiumRoutes: FastifyPluginAsync<AppDeps> = async () => {};
