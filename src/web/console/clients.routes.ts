import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../context.js';

/** The console's clients pages. */
export const consoleClientsRoutes: FastifyPluginAsync<Deps> = async () => {};
