import { executeCommand, prepareCommand } from '../../src/cli/run-command.js';
import { systemClock } from '../../src/lib/clock.js';
import { testConfig } from './app.js';
import type { ProcessResult } from './cli.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/**
 * The `idp` commands run in this process, through the CLI's own parsing and execution
 * (src/cli/run-command.ts, what bin/idp.js runs after opening the database), against a fresh
 * database of the test file's own. A command costs what its work costs, not a process start and a
 * migration; test/cli/cli.test.ts keeps running the real process (exit codes, the data directory's
 * lock, commands handed to a running server).
 */
export interface InProcessCli {
  idp(args: readonly string[], stdin?: string): Promise<ProcessResult>;
  database: TestDatabase;
}

export async function inProcessCli(env: Record<string, string> = {}): Promise<InProcessCli> {
  const database = await createTestDatabase();
  const config = testConfig({ LOG_LEVEL: 'silent', ...env });
  return {
    database,
    async idp(args, stdin) {
      const prepared = prepareCommand(args);
      const output =
        'exitCode' in prepared
          ? prepared
          : await executeCommand(prepared, { db: database.db, config, clock: systemClock, stdin });
      return { code: output.exitCode, signal: null, stdout: output.stdout, stderr: output.stderr };
    },
  };
}
