import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import type { Database } from './db/schema.js';
import type { Clock } from './lib/clock.js';
import type { DevicePollCache } from './modules/device/device-poll-cache.js';
import type { DpopReplayStore } from './modules/dpop/dpop-replay-store.js';
import type { ClientCache } from './modules/oauth/client-cache.js';
import type { AccessTokenCache } from './modules/oidc/token-cache.js';

/**
 * What every service is given besides its database handle: `service(db, ctx, input)`. It never
 * holds a database handle, so a service inside a transaction cannot reach the root handle by
 * mistake (on PGlite a query on it would wait for the transaction forever).
 */
export interface Context {
  config: Config;
  clock: Clock;
  /** Valid access tokens kept in the process; absent: every request asks the database. */
  tokenCache?: AccessTokenCache;
  /** Registered clients kept in the process; absent: every lookup asks the database. */
  clientCache?: ClientCache;
  /** Waiting devices' pending requests kept in the process; absent: every poll asks the database. */
  devicePollCache?: DevicePollCache;
  /** Used DPoP proofs in Redis (REDIS_URL); absent: in the database (RFC 9449 §11.1). */
  dpopReplayStore?: DpopReplayStore;
}

/** What each route plugin is registered with: the root database handle and the context. */
export interface Deps {
  db: Kysely<Database>;
  ctx: Context;
}
