import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis, type Result } from 'ioredis';
import type { Config } from '../config.js';
import { RateLimited } from '../lib/errors.js';
import { bearerTokenHash } from './bearer-auth.js';

const MINUTE_MS = 60_000;

/** The count of one key in its current window. */
export interface WindowCount {
  count: number;
  /** When the window ends (ms since the epoch). */
  resetAt: number;
}

/**
 * Where the counts live. `hit` counts one request against `key` in a fixed window of `windowMs`
 * starting with the key's first request, and answers the count so far; `undefined` when the store
 * is unavailable (the request is then let through).
 */
export interface CounterStore {
  hit(key: string, windowMs: number): WindowCount | undefined | Promise<WindowCount | undefined>;
  close(): void;
}

/**
 * Counts in the process (one instance). A Map keeps its keys in insertion order and a key whose
 * window ended is re-inserted, so with one window length the oldest windows are always first:
 * every new window sweeps the ended ones from the front, and memory holds only live keys. Past
 * `maxKeys` live keys (an attack from very many addresses), the oldest key is forgotten.
 */
export class MemoryCounterStore implements CounterStore {
  private readonly windows = new Map<string, WindowCount>();

  constructor(
    private readonly maxKeys = 200_000,
    private readonly now: () => number = Date.now,
  ) {}

  hit(key: string, windowMs: number): WindowCount {
    const now = this.now();
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      this.windows.delete(key);
      for (const [oldKey, old] of this.windows) {
        if (old.resetAt > now && this.windows.size < this.maxKeys) break;
        this.windows.delete(oldKey);
      }
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count++;
    return window;
  }

  get size(): number {
    return this.windows.size;
  }

  close(): void {
    this.windows.clear();
  }
}

/** INCR, with the window's expiry set by the key's first request; answers [count, ms left]. */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    idpRateHit(key: string, windowMs: number): Result<[number, number], Context>;
  }
}

/**
 * Counts in Redis, shared by every instance: one atomic script per request. A Redis that is down
 * or slower than 500 ms lets the request through and logs a warning (at most one per 10 s): an
 * outage of the limiter should not become an outage of sign-in.
 */
export class RedisCounterStore implements CounterStore {
  private lastWarning = 0;

  constructor(
    private readonly redis: Redis,
    private readonly log: FastifyBaseLogger,
    private readonly prefix = 'idp:rate:',
  ) {
    redis.defineCommand('idpRateHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    redis.on('error', (error) => this.warn(error));
  }

  /** Connects; a Redis that is down at startup leaves the limits off until it is back. */
  static async connect(url: string, log: FastifyBaseLogger): Promise<RedisCounterStore> {
    const redis = new Redis(url, {
      commandTimeout: 500,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    const store = new RedisCounterStore(redis, log);
    await redis.connect().catch((error: unknown) => store.warn(error));
    return store;
  }

  async hit(key: string, windowMs: number): Promise<WindowCount | undefined> {
    try {
      const [count, ttl] = await this.redis.idpRateHit(this.prefix + key, windowMs);
      return { count, resetAt: Date.now() + ttl };
    } catch (error) {
      this.warn(error);
      return undefined;
    }
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < 10_000) return;
    this.lastWarning = now;
    this.log.warn({ err: error }, 'rate-limit store (Redis) unavailable; requests are not counted');
  }

  close(): void {
    this.redis.disconnect();
  }
}

/** One limit: a name (the key's namespace), a maximum per minute, and what it counts by. */
interface Limit {
  name: string;
  max: number;
  key: (request: FastifyRequest) => string;
}

/** Routes whose password checks are also limited per account (the account named in the body). */
const SIGN_IN_ROUTES = new Set(['POST /signin', 'POST /api/v1/mobile/verify']);

/** The client of a client-authenticated request, from its Basic credentials; else undefined. */
function basicClientId(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  const id = decoded.slice(0, colon);
  try {
    return decodeURIComponent(id).slice(0, 200);
  } catch {
    return id.slice(0, 200); // not form-encoded: the token endpoint will refuse it; count it as sent
  }
}

/** The account a sign-in names: the lower-cased username of the form or JSON body. */
function accountOf(request: FastifyRequest): string | undefined {
  const username = (request.body as { username?: unknown } | undefined)?.username;
  return typeof username === 'string' && username.length > 0
    ? username.normalize('NFKC').toLowerCase().slice(0, 128)
    : undefined;
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
 * Every answer carries the draft RateLimit headers (draft-ietf-httpapi-ratelimit-headers) of its
 * tightest limit. The client IP is the socket's, or the one `TRUST_PROXY` allows Fastify to read
 * from X-Forwarded-For. Over a limit: 429 `rate_limited` with Retry-After.
 *
 * The hooks run on every request, so they are synchronous when the counts are in memory (no
 * promise, no microtask) and wait only for Redis when it is used.
 */
export async function installRateLimits(app: FastifyInstance, config: Config): Promise<void> {
  const limit = (name: string, max: number, key: (request: FastifyRequest) => string) =>
    max === 0 ? [] : [{ name, max, key }];
  const byIp = (request: FastifyRequest) => request.ip;
  const publicLimits: Limit[] = limit('public', config.RATE_LIMIT_PUBLIC_PER_MIN, byIp);
  const clientLimits = limit(
    'client',
    config.RATE_LIMIT_TOKEN_PER_MIN,
    (request) => basicClientId(request) ?? `ip:${request.ip}`,
  );
  const bearerLimits = limit(
    'bearer',
    config.RATE_LIMIT_BEARER_PER_MIN,
    // The token is a secret: the key is its hash, as everywhere else.
    (request) => bearerTokenHash(request) ?? `ip:${request.ip}`,
  );
  const signInLimits = [...publicLimits, ...limit('signin-ip', config.RATE_LIMIT_SIGNIN_PER_MIN, byIp)];
  const accountLimits = limit(
    'signin-account',
    config.RATE_LIMIT_SIGNIN_PER_MIN,
    (request) => accountOf(request) ?? '',
  );
  if ([publicLimits, clientLimits, bearerLimits, signInLimits].every((limits) => limits.length === 0)) return;

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
    if (limits.length === 0) {
      done();
      return;
    }
    const counts = limits.map((each) => store.hit(`${each.name}:${each.key(request)}`, MINUTE_MS));
    const decide = (windows: Array<WindowCount | undefined>) => {
      const now = Date.now();
      let tightest: { max: number; remaining: number; resetAt: number } | undefined;
      for (const [i, window] of windows.entries()) {
        if (!window) continue;
        const max = (limits[i] as Limit).max;
        const remaining = max - window.count;
        if (!tightest || remaining < tightest.remaining)
          tightest = { max, remaining, resetAt: window.resetAt };
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
    const route = request.routeOptions;
    const auth = route.config?.auth;
    if (auth === 'client') return enforce(request, reply, clientLimits, done);
    if (auth === 'bearer') return enforce(request, reply, bearerLimits, done);
    const signIn = SIGN_IN_ROUTES.has(`${request.method} ${route.url ?? ''}`);
    enforce(request, reply, signIn ? signInLimits : publicLimits, done);
  });
  if (accountLimits.length > 0) {
    app.addHook('preValidation', (request, reply, done) => {
      const signIn = SIGN_IN_ROUTES.has(`${request.method} ${request.routeOptions.url ?? ''}`);
      if (!signIn || accountOf(request) === undefined) return done();
      enforce(request, reply, accountLimits, done);
    });
  }
}
