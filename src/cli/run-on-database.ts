import { type Config, ConfigError, loadConfig } from '../config.js';
import { controlSocketPath, dataDirProblem, tryLockDataDir } from '../db/data-dir-lock.js';
import type { DatabaseHandle } from '../db/database-handle.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { systemClock } from '../lib/clock.js';
import { sendControlRequest } from './control-socket.js';
import { readOptionFiles } from './option-files.js';
import {
  type CommandOutput,
  executeCommand,
  failure,
  type PreparedCommand,
  preloadExecution,
} from './run-command.js';

/** How long a command waits for a data directory that another command is using. */
const BUSY_WAIT_MS = 15_000;

/** A command touches a few pages: a small buffer pool starts faster (src/db/pglite.ts). */
const CLI_SHARED_BUFFERS = '16MB';

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function runDirect(
  prepared: PreparedCommand,
  config: Config,
  opening: Promise<DatabaseHandle>,
  input: { stdin?: string; files: Record<string, string> },
) {
  // The modules every command needs load while the database opens: PGlite reads its files and
  // compiles its WebAssembly off the main thread meanwhile.
  const loading = Promise.all([import('../db/migrate.js'), preloadExecution()]);
  const database = await opening;
  try {
    const [{ migrateToLatest }] = await loading;
    // The same migrations the server applies on start, so a command works on a fresh database.
    // Not before `idp migrate` itself, which must report what it applied.
    if (prepared.command.name !== 'migrate') await migrateToLatest(database.db);
    return await executeCommand(prepared, { db: database.db, config, clock: systemClock, ...input });
  } finally {
    await database.close();
  }
}

/**
 * With PostgreSQL the command runs here. With the embedded database it runs here when no other
 * process has the directory open, and is handed to the running server otherwise.
 */
async function run(argv: string[], prepared: PreparedCommand): Promise<CommandOutput> {
  const config = loadConfig();
  // Before any database is opened or migrated: a refused command touches nothing.
  const refusal = prepared.command.refuse?.(config);
  if (refusal) return failure(refusal);
  const read = await readOptionFiles(prepared, readStdin);
  if ('exitCode' in read) return read;
  const { files } = read;
  const stdin = prepared.args.values['password-stdin'] === true ? await readStdin() : undefined;

  if (config.DATABASE_URL) {
    const { openPostgres } = await import('../db/postgres.js');
    return runDirect(
      prepared,
      config,
      Promise.resolve(openPostgres({ url: config.DATABASE_URL, poolMax: 2 })),
      { stdin, files },
    );
  }
  const problem = await dataDirProblem(config.DATA_DIR);
  if (problem) return { exitCode: 1, stdout: '', stderr: `idp: ${problem}\n` };
  const deadline = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    const lock = await tryLockDataDir(config.DATA_DIR);
    if (lock) {
      try {
        const { openPglite } = await import('../db/pglite.js');
        return await runDirect(
          prepared,
          config,
          openPglite(config.DATA_DIR, { sharedBuffers: CLI_SHARED_BUFFERS }),
          { stdin, files },
        );
      } finally {
        await lock.release();
      }
    }
    const answer = await sendControlRequest(controlSocketPath(config.DATA_DIR), { argv, stdin, files });
    if (answer) return answer;
    // Another command holds the directory for a moment.
    if (Date.now() > deadline) {
      return {
        exitCode: 1,
        stdout: '',
        stderr: `idp: DATA_DIR ${config.DATA_DIR} is busy: another process holds it and no server answers on its socket\n`,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Runs a command that needs the database (src/cli/main.ts imports this module only then), on
 * DATABASE_URL, or on DATA_DIR here or through the running server. Failures become the output.
 */
export async function runOnDatabase(argv: string[], prepared: PreparedCommand): Promise<CommandOutput> {
  try {
    return await run(argv, prepared);
  } catch (error) {
    const message =
      error instanceof ConfigError
        ? error.message
        : isDatabaseUnavailable(error)
          ? 'the database is unreachable'
          : `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
    return { exitCode: 1, stdout: '', stderr: `idp: ${message}\n` };
  }
}
