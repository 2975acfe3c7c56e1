import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { Config } from '../config.js';
import { ApiError, RateLimited } from '../lib/errors.js';
import { bearerTokenHash } from './bearer-auth.js';
import {
  type CounterStore,
  MemoryCounterStore,
  RedisCounterStore,
  type WindowCount,
} from './counter-stores.js';
import { accountKey, namedClientId, publicClientKey } from './rate-limit-keys.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * With `rateLimit: 'signin'`: the route's success is costly work too (an account, a password
     * hash, a mail), so every request counts under the per-IP sign-in limit, not only refusals.
     */
    costly?: boolean;
    /** A static file (cheap, cached, immutable): counted under no per-IP limit. */
    staticAsset?: boolean;
  }
}

const MINUTE_MS = 60_000;

/**
 * One limit: a name (the key's namespace), a maximum per minute, and what it counts by. A `peek`
 * limit is only read here, and counted later by what the request turns out to be (a failed
 * authentication, a refused form, an authenticated client): a request is refused when one more
 * would pass it.
 */
interface Limit {
  name: string;
  max: number;
  key: (request: FastifyRequest) => string | undefined;
  peek?: boolean;
}

/** A client that authenticated in this request, and whether it is public (no secret). */
interface AuthenticatedClient {
  clientId: string;
  isPublic: boolean;
}

/** Clients that authenticated in this request (set by the routes that authenticate them). */
const authenticatedClients = new WeakMap<FastifyRequest, AuthenticatedClient>();

/** Requests answered `invalid_grant`: counted per IP when their client is public. */
const refusedGrants = new WeakSet<FastifyRequest>();

/**
 * Marks the request's client authenticated: only then does it count against that client's limit,
 * per client, or for a public client (which proves nothing but its public id) per client and IP.
 */
export function countAuthenticatedClient(request: FastifyRequest, client: AuthenticatedClient): void {
  authenticatedClients.set(request, { clientId: client.clientId, isPublic: client.isPublic });
}

/** A refusal of a form: a wrong password or code, a failed passkey, a stale form (not a 429). */
const refused = (status: number) => status >= 400 && status < 500 && status !== 429;

/**
 * Rate limits per minute by the route's declarations (README "Rate limits"; `0` turns one off),
 * in memory or, with REDIS_URL, shared by every instance:
 * - every route per IP (public), but static files;
 * - `rateLimit: 'signin'` (form POSTs, mobile verify): per IP, the refused ones (and every one of
 *   a `costly` route), not page loads or ceremony options; `checksPassword`: per account, counted
 *   only after the CSRF check (src/http/rate-limit-keys.ts accountKey);
 * - `auth: 'client'`, per client once it authenticated (a public client per client and IP);
 *   `auth: 'bearer'`, per token; both, the 401s per IP (secret guessing), and a public client's
 *   `invalid_grant` answers too (anyone can send them with its public id).
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
  const tokenMax = config.RATE_LIMIT_TOKEN_PER_MIN;
  const clientLimits = [
    // Before authentication it is not known whether the client is public: both keys are read.
    ...limit('client', tokenMax, namedClientId, true),
    ...limit(
      'client-ip',
      tokenMax,
      (request) => {
        const clientId = namedClientId(request);
        return clientId === undefined ? undefined : publicClientKey(clientId, request.ip);
      },
      true,
    ),
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
  const signinIp = limit('signin-ip', config.RATE_LIMIT_SIGNIN_PER_MIN, byIp, true);
  const formLimits = [...publicLimits, ...signinIp];
  const accountLimits = limit('signin-account', config.RATE_LIMIT_ACCOUNT_PER_MIN, accountKey);

  /** The per-account limit, after the page guard (CSRF, session) let the form through. */
  const countAccount: preHandlerHookHandler = (request, reply, done) => {
    if (reply.sent) return done();
    enforce(request, reply, accountLimits, done);
  };
  // A stranger must not spend an account's limit with forms that fail the CSRF check: the
  // account is counted only after it (src/web/page-guards.ts puts its check first on these
  // routes). A route without a CSRF check (the mobile verify, whose requests anyone can sign with
  // a key of their own) has no per-account minute limit: its database budget bounds the guesses.
  app.addHook('onRoute', (route) => {
    if (route.config?.checksPassword && route.config.csrf && accountLimits.length > 0)
      route.preHandler = [...[route.preHandler ?? []].flat(), countAccount];
  });

  const all = [publicLimits, clientLimits, bearerLimits, formLimits, accountLimits];
  if (all.every((limits) => limits.length === 0)) return;

  const store: CounterStore = config.REDIS_URL
    ? await RedisCounterStore.connect(config.REDIS_URL, app.log, config.REDIS_KEY_PREFIX)
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
    if (config?.auth === 'client' || config?.staticAsset) return done();
    if (config?.auth === 'bearer') return enforce(request, reply, bearerLimits, done);
    enforce(request, reply, config?.rateLimit === 'signin' ? formLimits : publicLimits, done);
  });
  app.addHook('preValidation', (request, reply, done) => {
    if (request.routeOptions.config?.auth === 'client') return enforce(request, reply, clientLimits, done);
    done();
  });
  app.addHook('onError', (request, _reply, error, done) => {
    if (error instanceof ApiError && error.error === 'invalid_grant') refusedGrants.add(request);
    done();
  });

  // What a request turned out to be is counted after it is answered: a failed authentication or
  // a public client's refused grant against its address, an authenticated client against that
  // client, a refused form (or any request of a costly one) against its address.
  const failedAuthLimit = failedAuth.length > 0;
  const signinLimit = signinIp.length > 0;
  app.addHook('onResponse', (request, reply, done) => {
    const config = request.routeOptions.config;
    const counting: Array<ReturnType<CounterStore['hit']>> = [];
    if (config?.rateLimit === 'signin') {
      if (signinLimit && (config.costly || refused(reply.statusCode)))
        counting.push(store.hit(`signin-ip:${request.ip}`, MINUTE_MS));
    } else if (config?.auth === 'client' || config?.auth === 'bearer') {
      const client = authenticatedClients.get(request);
      const failed = reply.statusCode === 401 || (client?.isPublic === true && refusedGrants.has(request));
      if (failed && failedAuthLimit) counting.push(store.hit(`failed-auth:${request.ip}`, MINUTE_MS));
      if (client !== undefined && tokenMax > 0)
        counting.push(
          client.isPublic
            ? store.hit(`client-ip:${publicClientKey(client.clientId, request.ip)}`, MINUTE_MS)
            : store.hit(`client:${client.clientId}`, MINUTE_MS),
        );
    }
    // Nothing waits for these; a Redis error was already logged by the store.
    for (const count of counting) if (count instanceof Promise) count.catch(() => undefined);
    done();
  });
}
