import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../context.js';

/** The console's dashboard pages. */
export const consoleDashboardRoutes: FastifyPluginAsync<Deps> = async () => {};
