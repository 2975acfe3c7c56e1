import type { FastifyInstance } from 'fastify';
import type { Context } from '../context.js';
import { currentDpopNonce } from '../modules/dpop/dpop.service.js';

/**
 * Every answer to a request that carried a DPoP proof, on the token endpoint and the bearer routes,
 * carries the current `DPoP-Nonce` (RFC 9449 §8.2, §9): errors included, so that a client told
 * `use_dpop_nonce` retries with it, and successes, so that it has the next one before the current
 * one expires. Synchronous (with `done`): a request without a DPoP header costs one lookup.
 */
export function installDpopNonce(app: FastifyInstance, ctx: Context): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.headers.dpop !== undefined) {
      const auth = request.routeOptions.config?.auth;
      if (auth === 'bearer' || auth === 'client' || auth === 'mobile') {
        reply.header('dpop-nonce', currentDpopNonce(ctx.config.COOKIE_SECRET, ctx.clock.now()));
      }
    }
    done(null, payload);
  });
}
