import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../context.js';

/** The console's platform pages. */
export const consolePlatformRoutes: FastifyPluginAsync<Deps> = async () => {};
