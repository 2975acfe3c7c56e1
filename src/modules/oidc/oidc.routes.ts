import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../app.js';

/** Discovery and JWKS. */
export const oidcRoutes: FastifyPluginAsync<AppDeps> = async () => {};
