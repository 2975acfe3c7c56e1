import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../context.js';

/** The console's users pages. */
export const consoleUsersRoutes: FastifyPluginAsync<Deps> = async () => {};
