import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

/**
 * helmet's defaults for an API that serves no scripts, except: CORP `cross-origin` (other sites show
 * our avatars), nothing framed and no referrer (authorize URLs carry state), and HSTS only on https
 * (a development machine on localhost must not be pinned to https). Pages add their own CSP
 * (src/web/pages.ts).
 */
export function securityHeaders(config: Pick<Config, 'PUBLIC_URL'>): Record<string, string> {
  return {
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'cross-origin',
    'origin-agent-cluster': '?1',
    'referrer-policy': 'no-referrer',
    ...(config.PUBLIC_URL.startsWith('https:')
      ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' }
      : {}),
    'x-content-type-options': 'nosniff',
    'x-dns-prefetch-control': 'off',
    'x-download-options': 'noopen',
    'x-frame-options': 'DENY',
    'x-permitted-cross-domain-policies': 'none',
    'x-xss-protection': '0',
  };
}

/**
 * The headers and `X-Request-Id` on every answer, 404s included, in one synchronous hook: @fastify/helmet's
 * eleven middlewares cost about a quarter of a simple request's CPU time (bench/results.md).
 */
export function installSecurityHeaders(app: FastifyInstance, config: Pick<Config, 'PUBLIC_URL'>): void {
  const headers = securityHeaders(config);
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers).header('x-request-id', request.id);
    done();
  });
}
