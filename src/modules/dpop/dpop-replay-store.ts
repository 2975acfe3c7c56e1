import type { Redis } from 'ioredis';
import { Unavailable } from '../../lib/errors.js';

/**
 * Where used DPoP proofs are remembered when not in the database (RFC 9449 §11.1): shared by every
 * instance, so a proof replayed to another instance is refused too.
 */
/** Where a store reports that Redis is unreachable. */
export interface ReplayStoreLog {
  warn(object: object, message: string): void;
}

export interface DpopReplayStore {
  /** Records `key` for `ttlMs`; answers whether it was new. */
  firstUse(key: string, ttlMs: number): Promise<boolean>;
  close(): void;
}

/**
 * Used proofs in Redis (REDIS_URL): `SET key 1 NX PX ttl`, one atomic command. Unlike the rate
 * limits, a Redis that is down does not let requests through: a proof whose single use cannot be
 * checked is refused with 503 `unavailable`, since accepting it would accept replays.
 */
export class RedisDpopReplayStore implements DpopReplayStore {
  private lastWarning = 0;

  constructor(
    private readonly redis: Redis,
    private readonly log: ReplayStoreLog,
    /** Where used proofs are kept: REDIS_KEY_PREFIX, then `dpop:`. */
    private readonly prefix: string,
  ) {
    redis.on('error', (error) => this.warn(error));
  }

  /** Connects; a Redis that is down at startup refuses DPoP requests (503) until it is back. */
  static async connect(url: string, log: ReplayStoreLog, keyPrefix: string): Promise<RedisDpopReplayStore> {
    // Loaded only with REDIS_URL: most instances never need the client's modules at start-up.
    const { Redis } = await import('ioredis');
    const redis = new Redis(url, {
      commandTimeout: 500,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    const store = new RedisDpopReplayStore(redis, log, `${keyPrefix}dpop:`);
    await redis.connect().catch((error: unknown) => store.warn(error));
    return store;
  }

  async firstUse(key: string, ttlMs: number): Promise<boolean> {
    try {
      return (await this.redis.set(this.prefix + key, '1', 'PX', Math.max(1, ttlMs), 'NX')) === 'OK';
    } catch (error) {
      this.warn(error);
      throw new Unavailable('The DPoP replay check is unavailable; retry shortly.', { cause: error });
    }
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < 10_000) return;
    this.lastWarning = now;
    this.log.warn({ err: error }, 'DPoP replay store (Redis) unavailable; DPoP requests are refused');
  }

  close(): void {
    this.redis.disconnect();
  }
}
