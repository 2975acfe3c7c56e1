import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../context.js';

/** The console's audit pages. */
export const consoleAuditRoutes: FastifyPluginAsync<Deps> = async () => {};
