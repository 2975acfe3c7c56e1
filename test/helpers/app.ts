import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { ChangeSync, listenForChanges } from '../../src/db/change-feed.js';
import { type Clock, fixedClock } from '../../src/lib/clock.js';
import {
  DEVICE_POLL_CACHE_MAX_ENTRIES,
  DevicePollCache,
} from '../../src/modules/device/device-poll-cache.js';
import { ClientCache } from '../../src/modules/oauth/client-cache.js';
import {
  AccessTokenCache,
  CACHE_MAX_AGE_MS,
  TOKEN_CACHE_MAX_ENTRIES,
} from '../../src/modules/oidc/token-cache.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface TestApp {
  app: FastifyInstance;
  database: TestDatabase;
  clock: ReturnType<typeof fixedClock>;
  config: Config;
  /**
   * Waits until the app's caches have seen every change committed so far: after a test changes the
   * database directly (or through a service, as the CLI would), as another process would.
   */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** Rate limits off: a test file sends hundreds of requests from one address. test/http/rate-limit.test.ts turns them on. */
const NO_RATE_LIMITS = {
  RATE_LIMIT_PUBLIC_PER_MIN: '0',
  RATE_LIMIT_TOKEN_PER_MIN: '0',
  RATE_LIMIT_BEARER_PER_MIN: '0',
  RATE_LIMIT_SIGNIN_PER_MIN: '0',
  RATE_LIMIT_ACCOUNT_PER_MIN: '0',
  RATE_LIMIT_FAILED_AUTH_PER_MIN: '0',
};

/**
 * Redis keys of this test file's instances: files and runs share one Redis, and each file's fresh
 * database numbers its users from 1 again, so a per-account counter would otherwise count another
 * file's (or the previous run's) requests. The instances of one file share it, as a deployment's do.
 */
const REDIS_KEY_PREFIX = `idp-test-${randomUUID()}:`;

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://localhost:3000',
    REDIS_KEY_PREFIX,
    ...NO_RATE_LIMITS,
    ...env,
  });
}

/** The whole application on a fresh database of its own, driven through `app.inject()`. */
export async function createTestApp(
  options: {
    env?: Record<string, string>;
    clock?: Clock;
    database?: TestDatabase;
    tokenCache?: AccessTokenCache;
    clientCache?: ClientCache;
    devicePollCache?: DevicePollCache;
    logger?: FastifyBaseLogger;
  } = {},
): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const clock = fixedClock('2026-06-01T12:00:00Z');
  const config = testConfig(options.env);
  // The caches production runs with (src/main.ts), fed by the database's announcements, unless the
  // test brings its own.
  const tokenCache =
    options.tokenCache ??
    new AccessTokenCache({ maxAgeMs: CACHE_MAX_AGE_MS, maxEntries: TOKEN_CACHE_MAX_ENTRIES });
  const clientCache =
    options.clientCache ?? new ClientCache({ maxAgeMs: CACHE_MAX_AGE_MS, maxEntries: 10_000 });
  const devicePollCache =
    options.devicePollCache ?? new DevicePollCache({ maxEntries: DEVICE_POLL_CACHE_MAX_ENTRIES });
  const changes = new ChangeSync();
  const fed = [
    ...(options.tokenCache ? [] : [tokenCache]),
    ...(options.clientCache ? [] : [clientCache]),
    ...(options.devicePollCache ? [] : [devicePollCache]),
    changes,
  ];
  const stopListening = await listenForChanges(database.listen, fed);
  const app = await buildApp({
    config,
    db: database.db,
    clock: options.clock ?? clock,
    tokenCache,
    clientCache,
    devicePollCache,
    changes,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return {
    app,
    database,
    clock,
    config,
    sync: () => changes.sync(database.db),
    close: async () => {
      await app.close();
      await stopListening();
      await database.drop();
    },
  };
}
