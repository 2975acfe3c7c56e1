import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { decodeBasicCredentials } from '../lib/basic-credentials.js';
import { RateLimited } from '../lib/errors.js';
import { bearerTokenHash } from './bearer-auth.js';
import {
  type CounterStore,
  MemoryCounterStore,
  RedisCounterStore,
  type WindowCount,
} from './counter-stores.js';

const MINUTE_MS = 60_000;

/**
 * One limit: a name (the key's namespace), a maximum per minute, and what it counts by. A `peek`
 * limit is only read here, and counted later by what the request turns out to be (a failed
 * authentication, an authenticated client): a request is refused when one more would pass it.
 */
interface Limit {
  name: string;
  max: number;
  key: (request: FastifyRequest) => string | undefined;
  peek?: boolean;
}

/** The account a sign-in names: the username of the form or JSON body, bounded before NFKC (which can take a fraction of a second on a megabyte). */
function accountOf(request: FastifyRequest): string | undefined {
  const username = (request.body as { username?: unknown } | undefined)?.username;
  if (typeof username !== 'string' || username.length === 0) return undefined;
  return username.slice(0, 128).normalize('NFKC').toLowerCase().slice(0, 128);
}

/** The client a client-authenticated request names: its Basic credentials' id, or `client_id` in the form body. */
function namedClientId(request: FastifyRequest): string | undefined {
  const basic = decodeBasicCredentials(request.headers.authorization);
  if (basic !== undefined) return basic === 'malformed' ? undefined : basic.clientId.slice(0, 200);
  const posted = (request.body as { client_id?: unknown } | undefined)?.client_id;
  return typeof posted === 'string' ? posted.slice(0, 200) : undefined;
}

/** Clients that authenticated in this request (set by the routes that authenticate them). */
const authenticatedClients = new WeakMap<FastifyRequest, string>();

/** Marks the request's client authenticated: only then does it count against that client's limit. */
export function countAuthenticatedClient(request: FastifyRequest, clientId: string): void {
  authenticatedClients.set(request, clientId);
}

/**
 * Rate limits per minute by the route's declarations (README "Rate limits"; `0` turns one off),
 * in memory or, with REDIS_URL, shared by every instance:
 * - every route, per IP (public); `rateLimit: 'signin'` (form POSTs, mobile verify), per IP too
 *  , and `checksPassword`, per account named in the body;
 * - `auth: 'client'`, per client once it authenticated (so nobody spends another's limit with
 *   its public id); `auth: 'bearer'`, per token; both, the 401s per IP (secret guessing).
 * Answers carry the tightest limit's RateLimit headers (draft-ietf-httpapi-ratelimit-headers);
 * over it, 429 with Retry-After. In memory the hooks stay synchronous: no promise per request.
 */
export async function installRateLimits(app: FastifyInstance, config: Config): Promise<void> {
  const limit = (
    name: string,
    max: number,
    key: (request: FastifyRequest) => string | undefined,
    peek = false,
  ): Limit[] => (max === 0 ? [] : [{ name, max, key, peek }]);
  const byIp = (request: FastifyRequest) => request.ip;
  const publicLimits = limit('public', config.RATE_LIMIT_PUBLIC_PER_MIN, byIp);
  const failedAuth = limit('failed-auth', config.RATE_LIMIT_FAILED_AUTH_PER_MIN, byIp, true);
  const clientLimits = [
    ...limit('client', config.RATE_LIMIT_TOKEN_PER_MIN, namedClientId, true),
    ...failedAuth,
  ];
  const bearerLimits = [
    // The token is a secret: the key is its hash, as everywhere else.
    ...limit(
      'bearer',
      config.RATE_LIMIT_BEARER_PER_MIN,
      (request) => bearerTokenHash(request) ?? `ip:${request.ip}`,
    ),
    ...failedAuth,
  ];
  const formLimits = [...publicLimits, ...limit('signin-ip', config.RATE_LIMIT_SIGNIN_PER_MIN, byIp)];
  const accountLimits = limit('signin-account', config.RATE_LIMIT_SIGNIN_PER_MIN, accountOf);
  const all = [publicLimits, clientLimits, bearerLimits, formLimits, accountLimits];
  if (all.every((limits) => limits.length === 0)) return;

  const store: CounterStore = config.REDIS_URL
    ? await RedisCounterStore.connect(config.REDIS_URL, app.log)
    : new MemoryCounterStore();
  app.addHook('onClose', (_instance, done) => {
    store.close();
    done();
  });

  /** Counts the request against every limit; the tightest sets the headers, an exceeded one answers 429. */
  const enforce = (
    request: FastifyRequest,
    reply: FastifyReply,
    limits: Limit[],
    done: (error?: Error) => void,
  ): void => {
    const applied: Array<{ max: number; peek: boolean }> = [];
    const counts: Array<WindowCount | undefined | Promise<WindowCount | undefined>> = [];
    for (const each of limits) {
      const key = each.key(request);
      if (key === undefined) continue;
      const name = `${each.name}:${key}`;
      applied.push({ max: each.max, peek: each.peek === true });
      counts.push(each.peek ? store.peek(name) : store.hit(name, MINUTE_MS));
    }
    if (applied.length === 0) {
      done();
      return;
    }
    const decide = (windows: Array<WindowCount | undefined>) => {
      const now = Date.now();
      let tightest: { max: number; remaining: number; resetAt: number } | undefined;
      for (const [i, window] of windows.entries()) {
        const { max, peek } = applied[i] as { max: number; peek: boolean };
        // A peeked limit not yet started still bounds the answer's headers at its maximum.
        const used = (window?.count ?? 0) + (peek ? 1 : 0);
        const remaining = max - used;
        if (!window && !peek) continue;
        if (!tightest || remaining < tightest.remaining)
          tightest = { max, remaining, resetAt: window?.resetAt ?? now + MINUTE_MS };
      }
      if (!tightest) return done();
      const seconds = Math.max(1, Math.ceil((tightest.resetAt - now) / 1000));
      reply.headers({
        'ratelimit-limit': tightest.max,
        'ratelimit-remaining': Math.max(tightest.remaining, 0),
        'ratelimit-reset': seconds,
      });
      if (tightest.remaining >= 0) return done();
      done(
        new RateLimited(`Too many requests; retry in ${seconds} s.`, {
          headers: { 'retry-after': String(seconds) },
        }),
      );
    };
    if (counts.some((count) => count instanceof Promise)) {
      Promise.all(counts).then(decide, done);
    } else {
      decide(counts as Array<WindowCount | undefined>);
    }
  };

  app.addHook('onRequest', (request, reply, done) => {
    const config = request.routeOptions.config;
    // Client routes are counted once their body (which may name the client) is parsed.
    if (config?.auth === 'client') return done();
    if (config?.auth === 'bearer') return enforce(request, reply, bearerLimits, done);
    enforce(request, reply, config?.rateLimit === 'signin' ? formLimits : publicLimits, done);
  });
  app.addHook('preValidation', (request, reply, done) => {
    const config = request.routeOptions.config;
    if (config?.auth === 'client') return enforce(request, reply, clientLimits, done);
    if (config?.checksPassword && accountLimits.length > 0)
      return enforce(request, reply, accountLimits, done);
    done();
  });

  // What a request turned out to be is counted after it is answered: a failed authentication
  // against its address, an authenticated client against that client.
  const failedAuthLimit = failedAuth[0];
  const clientLimit = config.RATE_LIMIT_TOKEN_PER_MIN > 0;
  app.addHook('onResponse', (request, reply, done) => {
    const auth = request.routeOptions.config?.auth;
    if (auth !== 'client' && auth !== 'bearer') return done();
    const counting: Array<ReturnType<CounterStore['hit']>> = [];
    if (reply.statusCode === 401 && failedAuthLimit)
      counting.push(store.hit(`failed-auth:${request.ip}`, MINUTE_MS));
    const client = authenticatedClients.get(request);
    if (client !== undefined && clientLimit) counting.push(store.hit(`client:${client}`, MINUTE_MS));
    // Nothing waits for these; a Redis error was already logged by the store.
    for (const count of counting) if (count instanceof Promise) count.catch(() => undefined);
    done();
  });
}
