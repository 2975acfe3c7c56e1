import type { Kysely } from 'kysely';
import { readOptionFiles } from '../../src/cli/option-files.js';
import { executeCommand, prepareCommand } from '../../src/cli/run-command.js';
import { tryLockDataDir } from '../../src/db/data-dir-lock.js';
import { type DatabaseHandle, openPglite, openPostgres } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
import { systemClock } from '../../src/lib/clock.js';
import { testConfig } from './app.js';
import type { ProcessResult } from './cli.js';
import { createTestDatabase, migratedTemplate, type TestDatabase } from './database.js';

/**
 * The `idp` commands run in this process, through the CLI's own parsing and execution
 * (src/cli/run-command.ts, what bin/idp.js runs after opening the database), against a fresh
 * database of the test file's own. A command costs what its work costs, not a process start and a
 * migration; test/cli/cli.test.ts keeps running the real process (exit codes, the data directory's
 * lock, commands handed to a running server).
 */
export interface InProcessCli {
  idp: Idp;
  /** The same commands with more configuration (an SMTP_URL, NODE_ENV=production…). */
  withEnv(extra: Record<string, string>): Idp;
  database: TestDatabase;
}

/** `idp <args>` with `stdin` for `--password-stdin`: what the process would print, and its exit code. */
export type Idp = (args: readonly string[], stdin?: string) => Promise<ProcessResult>;

/**
 * The CLI on `db` with the configuration `env` gives (over the tests' defaults: a silent log, no
 * rate limits), on the system clock as bin/idp.js runs.
 */
export function idpOn(db: Kysely<Database>, env: Record<string, string> = {}): Idp {
  const config = testConfig({ LOG_LEVEL: 'silent', ...env });
  return async (args, stdin) => {
    const prepared = prepareCommand(args);
    // The files of `--…-file` options are read here, as the idp process reads them.
    const read = 'exitCode' in prepared ? prepared : await readOptionFiles(prepared, async () => stdin ?? '');
    const output =
      'exitCode' in prepared
        ? prepared
        : 'exitCode' in read
          ? read
          : await executeCommand(prepared, { db, config, clock: systemClock, stdin, files: read.files });
    return { code: output.exitCode, signal: null, stdout: output.stdout, stderr: output.stderr };
  };
}

export async function inProcessCli(
  env: Record<string, string> = {},
  options: {
    /** A database no migration has touched, for `idp migrate` itself. */
    empty?: boolean;
  } = {},
): Promise<InProcessCli> {
  const database = await createTestDatabase({ migrate: !options.empty });
  return {
    database,
    idp: idpOn(database.db, env),
    withEnv: (extra) => idpOn(database.db, { ...env, ...extra }),
  };
}

/** The in-process CLI on a database that child processes use too; `close()` hands it back to them. */
export interface SharedCli {
  idp: Idp;
  db: Kysely<Database>;
  /** Closes this process's connection, and the data directory's lock, so that a child can open it. */
  close(): Promise<void>;
}

/**
 * The in-process CLI on the database of a child's environment (see test/helpers/cli.ts
 * `cliDatabase`): its DATABASE_URL, or its DATA_DIR under the data directory's lock, opened as
 * bin/idp.js opens them. A test file runs its commands here and spawns only what needs a process,
 * on the same data, after `close()`.
 */
export async function sharedInProcessCli(
  env: Record<string, string>,
  options: {
    /** The configuration of the commands (PUBLIC_URL…), over the tests' defaults. */
    config?: Record<string, string>;
    /**
     * An empty or missing DATA_DIR starts as a copy of the migrated template, which costs no
     * initdb; a PostgreSQL database is left as it is.
     */
    fromTemplate?: boolean;
    /**
     * Whether to apply the pending migrations first, as bin/idp.js does before every command but
     * `idp migrate` (default true).
     */
    migrate?: boolean;
  } = {},
): Promise<SharedCli> {
  let database: DatabaseHandle;
  let release: () => Promise<void> = async () => undefined;
  if (env.DATABASE_URL) {
    database = openPostgres({ url: env.DATABASE_URL, poolMax: 2 });
  } else {
    const dataDir = env.DATA_DIR as string;
    const lock = await tryLockDataDir(dataDir);
    if (!lock) throw new Error(`${dataDir} is locked by another process`);
    release = () => lock.release();
    database = await openPglite(dataDir, options.fromTemplate ? { from: await migratedTemplate() } : {});
  }
  const close = async () => {
    await database.close();
    await release();
  };
  if (options.migrate !== false)
    await migrateToLatest(database.db).catch((error) => close().then(() => Promise.reject(error)));
  return { db: database.db, idp: idpOn(database.db, options.config), close };
}
