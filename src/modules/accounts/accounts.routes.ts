import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../app.js';

/** Sign-up, sign-in, sign-out and the account page. */
export const accountRoutes: FastifyPluginAsync<AppDeps> = async () => {};
