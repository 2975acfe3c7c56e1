import type { FastifyBaseLogger } from 'fastify';
import type { Redis, Result } from 'ioredis';

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
  /** The count of `key` in its live window, without counting (undefined: none, or the store is unavailable). */
  peek(key: string): WindowCount | undefined | Promise<WindowCount | undefined>;
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

  peek(key: string): WindowCount | undefined {
    const window = this.windows.get(key);
    return window !== undefined && window.resetAt > this.now() ? window : undefined;
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

/** The count and ms left of a live window; [0, -2] when there is none. */
const PEEK_SCRIPT = `
local count = redis.call('GET', KEYS[1])
return {tonumber(count) or 0, redis.call('PTTL', KEYS[1])}`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    idpRateHit(key: string, windowMs: number): Result<[number, number], Context>;
    idpRatePeek(key: string): Result<[number, number], Context>;
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
    /** Where the counters live: REDIS_KEY_PREFIX, then `rate:`. */
    private readonly prefix: string,
  ) {
    redis.defineCommand('idpRateHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    redis.defineCommand('idpRatePeek', { numberOfKeys: 1, lua: PEEK_SCRIPT });
    redis.on('error', (error) => this.warn(error));
  }

  /** Connects; a Redis that is down at startup leaves the limits off until it is back. */
  static async connect(url: string, log: FastifyBaseLogger, keyPrefix: string): Promise<RedisCounterStore> {
    // Loaded only with REDIS_URL: most instances never need the client's modules at start-up.
    const { Redis } = await import('ioredis');
    const redis = new Redis(url, {
      commandTimeout: 500,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    const store = new RedisCounterStore(redis, log, `${keyPrefix}rate:`);
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

  async peek(key: string): Promise<WindowCount | undefined> {
    try {
      const [count, ttl] = await this.redis.idpRatePeek(this.prefix + key);
      return count > 0 && ttl > 0 ? { count, resetAt: Date.now() + ttl } : undefined;
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
