import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.js';
import { Unauthorized } from '../lib/errors.js';
import { hashSecret, secretMatchesHash } from '../lib/secrets.js';
import { rollups } from '../modules/rollups/rollup-recorder.js';

/** Every metric of the process (Prometheus text format at GET /metrics). */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'idp_' });

const httpRequests = new Counter({
  name: 'idp_http_requests_total',
  help: 'Requests answered, by method, route pattern and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [metricsRegistry],
});

const httpDuration = new Histogram({
  name: 'idp_http_request_duration_seconds',
  help: 'Time to answer, by method and route pattern.',
  labelNames: ['method', 'route'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

/** Token sets issued, by grant (authorization_code, refresh_token, mobile_verify, mobile_refresh). */
export const tokensIssued = new Counter({
  name: 'idp_tokens_issued_total',
  help: 'Token sets issued by the token endpoint and the mobile sign-in, by grant.',
  labelNames: ['grant_type'] as const,
  registers: [metricsRegistry],
});

/** Wallet charges, by outcome (charged, replayed, conflict, insufficient_funds). */
export const walletCharges = new Counter({
  name: 'idp_wallet_charges_total',
  help: 'Wallet charge requests that reached the ledger, by outcome.',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

/** Back-channel logout deliveries, by outcome (delivered, retry, given_up, dropped): counted by the worker's report. */
export const backchannelLogouts = new Counter({
  name: 'idp_backchannel_logouts_total',
  help: 'Back-channel logout token deliveries, by outcome.',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

interface RouteMetrics {
  duration: Histogram.Internal<'method' | 'route'>;
  byStatus: Map<number, Counter.Internal>;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

let poolStats: (() => PoolStats) | undefined;
new Gauge({
  name: 'idp_db_pool_connections',
  help: 'PostgreSQL pool connections, by state (total, idle, waiting requests, max).',
  labelNames: ['state'] as const,
  registers: [metricsRegistry],
  collect() {
    const stats = poolStats?.();
    if (!stats) return;
    for (const [state, value] of Object.entries(stats)) this.set({ state }, value);
  },
});

/**
 * Counts every answer by route pattern (never the raw URL, so unknown paths cannot grow the label
 * set) and, when METRICS_TOKEN is set, serves GET /metrics to callers presenting it as a bearer
 * token. Without METRICS_TOKEN there is no /metrics route.
 */
export function installMetrics(app: FastifyInstance, config: Config, stats?: () => PoolStats): void {
  if (stats) poolStats = stats;
  // Label children are looked up once per route and status: prom-client hashes the label set on
  // every call otherwise, and this hook runs on every request.
  const routes = new Map<string, RouteMetrics>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${route}`;
    let metrics = routes.get(key);
    if (!metrics) {
      metrics = { duration: httpDuration.labels({ method: request.method, route }), byStatus: new Map() };
      routes.set(key, metrics);
    }
    let count = metrics.byStatus.get(reply.statusCode);
    if (!count) {
      count = httpRequests.labels({ method: request.method, route, status: String(reply.statusCode) });
      metrics.byStatus.set(reply.statusCode, count);
    }
    count.inc();
    metrics.duration.observe(reply.elapsedTime / 1000);
    rollups.response(request.routeOptions.url, reply.statusCode);
    done();
  });
  if (!config.METRICS_TOKEN) return;
  const tokenHash = hashSecret(config.METRICS_TOKEN);
  app.get(
    '/metrics',
    {
      config: {
        auth: 'bearer',
        description: 'Prometheus metrics (Authorization: Bearer <METRICS_TOKEN>)',
      },
      schema: { hide: true },
    },
    async (request, reply) => {
      const presented = /^bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
      if (!secretMatchesHash(presented, tokenHash))
        throw new Unauthorized('Send the METRICS_TOKEN as a bearer token.');
      reply.header('cache-control', 'no-store').type(metricsRegistry.contentType);
      return metricsRegistry.metrics();
    },
  );
}
