import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../app.js';

/** Authorize, consent decision, token, revocation and introspection. */
export const oauthRoutes: FastifyPluginAsync<AppDeps> = async () => {};
