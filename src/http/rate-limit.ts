import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { RateLimited } from '../lib/errors.js';
import { hashSecret } from '../lib/secrets.js';

/** The answer of one limiter for one request (the shape of @fastify/rate-limit's createRateLimit). */
interface LimitResult {
  isAllowed: boolean;
  isExceeded: boolean;
  max: number;
  remaining: number;
  ttlInSeconds: number;
}
type Limiter = (request: FastifyRequest) => Promise<LimitResult>;

declare module 'fastify' {
  interface FastifyInstance {
    createRateLimit(options: {
      max: number;
      timeWindow: number;
      keyGenerator: (request: FastifyRequest) => string;
    }): Limiter;
  }
}

const MINUTE_MS = 60_000;

/** Routes whose password checks are also limited per account (the account named in the body). */
const SIGN_IN_ROUTES = new Set(['POST /signin', 'POST /api/v1/mobile/verify']);

/** The client of a client-authenticated request, from its Basic credentials; else undefined. */
function basicClientId(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 ? decodeURIComponent(decoded.slice(0, colon)).slice(0, 200) : undefined;
}

/** The account a sign-in names: the lower-cased username of the form or JSON body. */
function accountOf(request: FastifyRequest): string | undefined {
  const username = (request.body as { username?: unknown } | undefined)?.username;
  return typeof username === 'string' && username.length > 0
    ? username.normalize('NFKC').toLowerCase().slice(0, 128)
    : undefined;
}

/** The draft RateLimit headers (draft-ietf-httpapi-ratelimit-headers) of the tightest limit. */
function setHeaders(reply: FastifyReply, result: LimitResult): void {
  reply
    .header('ratelimit-limit', result.max)
    .header('ratelimit-remaining', Math.max(result.remaining, 0))
    .header('ratelimit-reset', result.ttlInSeconds);
}

/**
 * Rate limits per class of route (README "Rate limits"), counted in memory or, with `REDIS_URL`,
 * in Redis so that every instance shares the counters. Each limit is per minute; `0` turns it off.
 *
 * - public routes, pages, the mobile routes and unknown paths (404s too): per IP,
 *   RATE_LIMIT_PUBLIC_PER_MIN;
 * - client-authenticated routes (token, revocation, introspection): per client_id of the Basic
 *   credentials (else per IP), RATE_LIMIT_TOKEN_PER_MIN;
 * - bearer routes: per access token, RATE_LIMIT_BEARER_PER_MIN;
 * - sign-in (the page and the mobile verify), in addition: per IP and per account named in the
 *   body, RATE_LIMIT_SIGNIN_PER_MIN each.
 *
 * The client IP is the socket's, or the one `TRUST_PROXY` allows Fastify to read from
 * X-Forwarded-For. Over a limit: 429 `rate_limited` with Retry-After and the RateLimit headers.
 * If Redis fails, requests are let through (and logged) rather than refused.
 */
export async function installRateLimits(app: FastifyInstance, config: Config): Promise<void> {
  const limits = [
    config.RATE_LIMIT_PUBLIC_PER_MIN,
    config.RATE_LIMIT_TOKEN_PER_MIN,
    config.RATE_LIMIT_BEARER_PER_MIN,
    config.RATE_LIMIT_SIGNIN_PER_MIN,
  ];
  if (limits.every((max) => max === 0)) return;
  const redis = config.REDIS_URL
    ? new Redis(config.REDIS_URL, {
        // A request waits for Redis at most this long, then goes through (skipOnError).
        commandTimeout: 500,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        lazyConnect: true,
      })
    : undefined;
  // Connected before the first request is counted; a Redis that is down lets requests through.
  await redis?.connect().catch((error: unknown) => {
    app.log.warn(
      { err: error },
      'rate-limit store (Redis) unavailable at startup; limits are off until it is back',
    );
  });
  if (redis) {
    redis.on('error', (error) => app.log.warn({ err: error }, 'rate-limit store (Redis) unavailable'));
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
  }
  await app.register(rateLimit, {
    global: false,
    ...(redis ? { redis, nameSpace: 'idp:rate:' } : {}),
    skipOnError: true,
  });

  const limiter = (
    name: string,
    max: number,
    key: (request: FastifyRequest) => string,
  ): Limiter | undefined =>
    max === 0
      ? undefined
      : app.createRateLimit({
          max,
          timeWindow: MINUTE_MS,
          keyGenerator: (request) => `${name}:${key(request)}`,
        });
  const perIp = (name: string, max: number) => limiter(name, max, (request) => request.ip);

  const publicLimit = perIp('public', config.RATE_LIMIT_PUBLIC_PER_MIN);
  const clientLimit = limiter(
    'client',
    config.RATE_LIMIT_TOKEN_PER_MIN,
    (request) => basicClientId(request) ?? `ip:${request.ip}`,
  );
  const bearerLimit = limiter('bearer', config.RATE_LIMIT_BEARER_PER_MIN, (request) =>
    // The token is a secret: the key is its hash, as everywhere else.
    request.headers.authorization ? hashSecret(request.headers.authorization) : `ip:${request.ip}`,
  );
  const signInIpLimit = perIp('signin-ip', config.RATE_LIMIT_SIGNIN_PER_MIN);
  const signInAccountLimit = limiter(
    'signin-account',
    config.RATE_LIMIT_SIGNIN_PER_MIN,
    (request) => accountOf(request) ?? '',
  );

  /** Applies limiters in order; the first one exceeded answers 429. */
  const enforce = async (
    request: FastifyRequest,
    reply: FastifyReply,
    limiters: Array<Limiter | undefined>,
  ) => {
    let tightest: LimitResult | undefined;
    for (const limit of limiters) {
      if (!limit) continue;
      const result = await limit(request);
      if (!tightest || result.remaining < tightest.remaining) tightest = result;
      if (result.isExceeded) {
        setHeaders(reply, result);
        throw new RateLimited(`Too many requests; retry in ${result.ttlInSeconds} s.`, {
          headers: { 'retry-after': String(result.ttlInSeconds) },
        });
      }
    }
    if (tightest) setHeaders(reply, tightest);
  };

  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions;
    const auth = route.config?.auth;
    const routeKey = `${request.method} ${route.url ?? ''}`;
    if (auth === 'client') return enforce(request, reply, [clientLimit]);
    if (auth === 'bearer') return enforce(request, reply, [bearerLimit]);
    const limiters = [publicLimit];
    if (SIGN_IN_ROUTES.has(routeKey)) limiters.push(signInIpLimit);
    return enforce(request, reply, limiters);
  });
  app.addHook('preValidation', async (request, reply) => {
    const routeKey = `${request.method} ${request.routeOptions.url ?? ''}`;
    if (SIGN_IN_ROUTES.has(routeKey) && accountOf(request) !== undefined) {
      await enforce(request, reply, [signInAccountLimit]);
    }
  });
}
