import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../app.js';

/** GET /api/users/search. */
export const searchRoutes: FastifyPluginAsync<AppDeps> = async () => {};
