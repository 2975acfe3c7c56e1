import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../app.js';

/** Userinfo and /me. */
export const profileRoutes: FastifyPluginAsync<AppDeps> = async () => {};
