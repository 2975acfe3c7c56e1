import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

/**
 * The headers every answer carries, computed once. They are helmet's defaults for an API that
 * serves no scripts, with three choices of ours:
 * - `Cross-Origin-Resource-Policy: cross-origin`: other sites may show the avatars that search
 *   results point to;
 * - `Referrer-Policy: no-referrer` and `X-Frame-Options: DENY`: nothing here is meant to be framed
 *   or to leak its URL (authorize URLs carry state);
 * - `Strict-Transport-Security` only when the service is on https (on http it would be ignored,
 *   and a development machine on localhost should not be pinned to https).
 * Pages add their own strict Content-Security-Policy (http/pages.ts); JSON needs none.
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
 * Sets the security headers and `X-Request-Id` on every answer, errors and 404s included, in one
 * synchronous hook: a fixed set of headers needs no middleware chain, and this hook runs on every
 * request (it replaced @fastify/helmet, whose eleven middlewares cost about a quarter of a simple
 * request's CPU time; see bench/results.md).
 */
export function installSecurityHeaders(app: FastifyInstance, config: Pick<Config, 'PUBLIC_URL'>): void {
  const headers = securityHeaders(config);
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers).header('x-request-id', request.id);
    done();
  });
}
