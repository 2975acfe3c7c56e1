import { type CommandOutput, failure, prepareCommand } from './run-command.js';

/**
 * The `idp` process. Help, the version and usage mistakes are answered from the command table
 * alone; the configuration, the database driver and the command's services are imported only for
 * a command that runs.
 */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let output: CommandOutput;
  try {
    const prepared = prepareCommand(argv);
    output =
      'exitCode' in prepared
        ? prepared
        : await (await import('./run-on-database.js')).runOnDatabase(argv, prepared);
  } catch (error) {
    output = failure(`unexpected error: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.stdout.write(output.stdout);
  process.stderr.write(output.stderr);
  process.exitCode = output.exitCode;
}

await main();
