import type { FastifyInstance } from 'fastify';
import type { ControlServer } from './cli/control-socket.js';
import { assertServable, type Config, ConfigError, describeDatabaseTarget, loadConfig } from './config.js';
import { ChangeSync, listenForChanges } from './db/change-feed.js';
import { controlSocketPath, type DataDirLock, dataDirProblem, lockDataDir } from './db/data-dir-lock.js';
import type { DatabaseHandle } from './db/database-handle.js';
import { migrateToLatest } from './db/migrate.js';
import { hasNoClient, logFirstRunHint } from './first-run.js';
import { closeQuietConnectionsOnDrain } from './http/drain.js';
import { describeListenError, portProblem } from './http/listen-port.js';
import { createLogger } from './http/logger.js';
import { systemClock } from './lib/clock.js';
import { DEVICE_POLL_CACHE_MAX_ENTRIES, DevicePollCache } from './modules/device/device-poll-cache.js';
import { ClientCache } from './modules/oauth/client-cache.js';
import { ensureSigningKeys } from './modules/oidc/keys.service.js';
import { AccessTokenCache, CACHE_MAX_AGE_MS, TOKEN_CACHE_MAX_ENTRIES } from './modules/oidc/token-cache.js';
import { recordSealingKey } from './modules/sealing/sealing-key.service.js';

/** The process: read config, open the database, migrate, listen, and shut down gracefully. */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
    assertServable(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`idp: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  // A busy port is found before DATA_DIR or the database is touched: otherwise a start that cannot
  // listen would first create and migrate a database and leave it behind.
  const portInUse = await portProblem(config.HOST, config.PORT);
  if (portInUse) {
    console.error(`idp: ${portInUse}`);
    process.exit(1);
  }
  const logger = createLogger(config);
  const cleanups: Array<() => Promise<void>> = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => logger.error({ err: error }));
  };

  // Signals are handled from the start: one that arrives while the server is still starting waits
  // for the start to finish, then shuts down as usual (nothing is left half open).
  let started: () => void = () => undefined;
  const startup = new Promise<void>((resolve) => {
    started = resolve;
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const forced = setTimeout(() => {
      logger.error('shutdown timed out; exiting with requests still open');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS);
    forced.unref();
    await startup;
    await cleanUp();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  // The application's modules load while the database opens: the embedded database's start is
  // mostly file reading and WebAssembly compiling, which leave this thread free.
  const appModule = import('./app.js');
  appModule.catch(() => undefined); // a failure is reported where it is awaited
  let lock: DataDirLock | null = null;
  let database: DatabaseHandle;
  if (config.DATABASE_URL) {
    const { openPostgres } = await import('./db/postgres.js');
    database = openPostgres({
      url: config.DATABASE_URL,
      poolMax: config.DATABASE_POOL_MAX,
      statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
      onConnectionError: (error) => logger.warn({ err: error }, 'database connection failed'),
    });
  } else {
    const problem = await dataDirProblem(config.DATA_DIR);
    if (problem) {
      console.error(`idp: ${problem}`);
      process.exit(1);
    }
    // PGlite takes no lock of its own; two processes on one directory would corrupt it.
    lock = await lockDataDir(config.DATA_DIR, 5_000);
    if (!lock) {
      console.error(
        `idp: DATA_DIR ${config.DATA_DIR} is in use by another idp process (a server, or a command that is still running). ` +
          'Stop it first, or set DATA_DIR or DATABASE_URL to use another database.',
      );
      process.exit(1);
    }
    cleanups.push(() => (lock as DataDirLock).release());
    const { openPglite } = await import('./db/pglite.js');
    database = await openPglite(config.DATA_DIR);
  }
  cleanups.push(() => database.close());
  logger.info({ database: describeDatabaseTarget(config) }, 'database: %s', describeDatabaseTarget(config));

  const applied = await migrateToLatest(database.db);
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  // A signing key for each id_token algorithm, made now rather than on the first sign-in (an RSA
  // key takes tens of milliseconds to generate).
  await ensureSigningKeys(database.db, { config, clock: systemClock });
  // What a command sealing a secret in another process (the CLI on PostgreSQL) checks its key against.
  await recordSealingKey(database.db, { config, clock: systemClock });

  // Tokens and clients kept in memory, forgotten at once when the database announces a change.
  const tokenCache = new AccessTokenCache({
    maxAgeMs: CACHE_MAX_AGE_MS,
    maxEntries: TOKEN_CACHE_MAX_ENTRIES,
  });
  const clientCache = new ClientCache({ maxAgeMs: CACHE_MAX_AGE_MS, maxEntries: 10_000 });
  const devicePollCache = new DevicePollCache({ maxEntries: DEVICE_POLL_CACHE_MAX_ENTRIES });
  const changes = new ChangeSync();
  cleanups.push(await listenForChanges(database.listen, [tokenCache, clientCache, devicePollCache, changes]));
  // Read while the app is built, so that the hint follows the "listening" line at once.
  const firstRun = hasNoClient(database.db);
  firstRun.catch(() => undefined); // awaited below
  const { buildApp } = await appModule;
  const app: FastifyInstance = await buildApp({
    config,
    db: database.db,
    clock: systemClock,
    logger,
    tokenCache,
    clientCache,
    devicePollCache,
    changes,
    ...(database.poolStats ? { poolStats: database.poolStats } : {}),
  });
  closeQuietConnectionsOnDrain(app.server);
  const isFirstRun = await firstRun;
  try {
    await app.listen({ host: config.HOST, port: config.PORT });
  } catch (error) {
    // Taken since the check above, by a process that started meanwhile.
    const problem = describeListenError(error, config.HOST, config.PORT);
    if (!problem) throw error;
    console.error(`idp: ${problem}`);
    await cleanUp();
    process.exit(1);
  }
  if (isFirstRun)
    logFirstRunHint(config.PUBLIC_URL, logger, process.stdout, config.NODE_ENV === 'production');

  // What runs beside the requests is loaded after the server listens: none of it answers one.
  const [{ schedulePurge }, { MailWorker }, { createMailTransport, startupMailWarning }] = await Promise.all([
    import('./modules/housekeeping/purge.service.js'),
    import('./modules/mail/mail.worker.js'),
    import('./modules/mail/transport.js'),
  ]);
  if (config.HOUSEKEEPING_INTERVAL_SECONDS > 0) {
    cleanups.push(
      schedulePurge(
        database.db,
        { config, clock: systemClock },
        { intervalMs: config.HOUSEKEEPING_INTERVAL_SECONDS * 1000, log: logger },
      ),
    );
  }

  // After the database in `cleanups`, so stopped before it closes: the send in progress is recorded.
  const mailWarning = startupMailWarning(config);
  if (mailWarning) logger.warn(mailWarning);
  const mailWorker = new MailWorker(
    database.db,
    { config, clock: systemClock },
    createMailTransport(config, logger),
    logger,
  );
  await mailWorker.start(database.listen);
  cleanups.push(() => mailWorker.stop());
  // Likewise the back-channel logout tokens, on every instance.
  const [{ BackchannelLogoutWorker }, { backchannelLogouts }] = await Promise.all([
    import('./modules/backchannel/logout.worker.js'),
    import('./http/metrics.js'),
  ]);
  const logoutWorker = new BackchannelLogoutWorker(
    database.db,
    { config, clock: systemClock },
    logger,
    {},
    (outcome) => backchannelLogouts.inc({ outcome }),
  );
  await logoutWorker.start(database.listen);
  cleanups.push(() => logoutWorker.stop());
  // The charts' counters, added to the database once a minute and once more at shutdown (after the
  // HTTP drain, before the database closes: the last requests are counted).
  const [{ startRollupFlush }, { rollups }] = await Promise.all([
    import('./modules/rollups/rollup-flush.js'),
    import('./modules/rollups/rollup-recorder.js'),
  ]);
  cleanups.push(startRollupFlush(database.db, rollups, { log: logger }));

  let control: ControlServer | undefined;
  if (lock) {
    const { startControlServer } = await import('./cli/control-socket.js');
    control = await startControlServer(
      controlSocketPath(config.DATA_DIR),
      { config, db: database.db, clock: systemClock },
      logger,
    );
    cleanups.push(() => (control as ControlServer).close());
  }

  // One full collection once everything has started: the start-up's garbage (migrations, keys,
  // compiled routes and serializers: some 15 MiB of resident memory) would otherwise stay until
  // load fills the heap. `gc` exists when Node.js runs with --expose-gc (bin/launch.js).
  (globalThis as { gc?: () => void }).gc?.();

  // Last in, so first out: the HTTP drain starts at once on a signal (no new connection, every
  // answer closes its connection), before the workers stop and well before the database closes.
  cleanups.push(() => app.close());
  started();
}

main().catch((error: unknown) => {
  console.error('idp: failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
