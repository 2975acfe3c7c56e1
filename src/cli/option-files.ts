import { open } from 'node:fs/promises';
import { type CommandOutput, failure, type PreparedCommand } from './run-command.js';

/** The most an option's file may hold: secrets and keys are small, and a handed-over command is bounded. */
const OPTION_FILE_MAX_BYTES = 64 * 1024;

/** The file's text, or undefined when it holds more than OPTION_FILE_MAX_BYTES. */
async function readBounded(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(OPTION_FILE_MAX_BYTES + 1);
    let length = 0;
    for (;;) {
      // Read to the end rather than trust a size: /dev/stdin and pipes have none.
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) return buffer.subarray(0, length).toString('utf8');
      length += bytesRead;
      if (length > OPTION_FILE_MAX_BYTES) return undefined;
    }
  } finally {
    await handle.close();
  }
}

/**
 * Reads the files the command's `--…-file` options name, in the `idp` process where the operator
 * typed it, relative to its working directory; `-` is standard input (`readStdin`), for one option.
 * A secret passed this way stays out of the process list and the shell's history, and a command
 * handed to the running server carries the contents (the server has another working directory,
 * and may run as another user).
 */
export async function readOptionFiles(
  prepared: PreparedCommand,
  readStdin: () => Promise<string>,
): Promise<{ files: Record<string, string> } | CommandOutput> {
  const files: Record<string, string> = {};
  const fromStdin = Object.entries(prepared.args.values)
    .filter(([name, value]) => name.endsWith('-file') && value === '-')
    .map(([name]) => `--${name}`);
  if (fromStdin.length > 1)
    return failure(`only one option may read standard input ("-"): ${fromStdin.join(', ')}`);
  for (const [name, spec] of Object.entries(prepared.command.options)) {
    const file = prepared.args.values[name];
    if (!name.endsWith('-file') || spec.type !== 'string' || typeof file !== 'string') continue;
    try {
      // Standard input may be a socket rather than a pipe (a spawned process), which /dev/stdin cannot open.
      const text = file === '-' ? await readStdin() : await readBounded(file);
      if (text === undefined)
        return failure(`--${name}: ${file} is larger than ${OPTION_FILE_MAX_BYTES / 1024} KiB`);
      files[name] = text;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      return failure(`--${name}: cannot read ${file} (${code})\nusage: ${prepared.command.usage}`);
    }
  }
  return { files };
}
