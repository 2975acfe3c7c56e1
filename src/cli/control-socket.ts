import { chmod, unlink } from 'node:fs/promises';
import net from 'node:net';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/errors.js';
import type { CommandContext } from './command.js';
import { type CommandOutput, runCommand } from './run-command.js';

/**
 * How the CLI hands a command to the running server when the database is embedded, as a PGlite
 * directory can be open in one process only: an owner-only Unix socket in DATA_DIR,
 * one connection per command, one JSON line each way (`{argv, stdin, files}`, `{exitCode, stdout, stderr}`).
 */
export interface ControlRequest {
  argv: string[];
  stdin?: string;
  /** What the command's `--…-file` options name, read by the `idp` process (readOptionFiles). */
  files?: Record<string, string>;
}

function isTextRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((each) => typeof each === 'string')
  );
}

const MAX_REQUEST_BYTES = 1024 * 1024;

export interface ControlServer {
  close(): Promise<void>;
}

export async function startControlServer(
  socketPath: string,
  ctx: Omit<CommandContext, 'stdin' | 'files'>,
  logger?: Logger,
): Promise<ControlServer> {
  // The caller holds the data-directory lock, so a socket file left here is a crashed server's.
  await unlink(socketPath).catch(() => undefined);
  const server = net.createServer((socket) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_REQUEST_BYTES) {
        socket.destroy();
        return;
      }
      const newline = buffer.indexOf('\n');
      if (newline === -1) return;
      socket.removeAllListeners('data');
      void answer(buffer.slice(0, newline)).then((output) => socket.end(`${JSON.stringify(output)}\n`));
    });
  });

  const answer = async (line: string): Promise<CommandOutput> => {
    let request: ControlRequest;
    try {
      request = JSON.parse(line) as ControlRequest;
      if (!Array.isArray(request.argv) || !request.argv.every((arg) => typeof arg === 'string'))
        throw new Error();
      if (request.files !== undefined && !isTextRecord(request.files)) throw new Error();
    } catch {
      return { exitCode: 1, stdout: '', stderr: 'idp: malformed control request\n' };
    }
    try {
      return await runCommand(request.argv, { ...ctx, stdin: request.stdin, files: request.files ?? {} });
    } catch (error) {
      logger?.error({ err: error, command: request.argv.slice(0, 2).join(' ') }, 'control command failed');
      const reason = isDatabaseUnavailable(error)
        ? 'the database is unavailable'
        : 'internal error (see the server log)';
      return { exitCode: 1, stdout: '', stderr: `idp: ${reason}\n` };
    }
  };

  // Created owner-only from the start (umask), not only after the chmod below.
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
  } finally {
    process.umask(umask);
  }
  await chmod(socketPath, 0o600);
  server.unref();
  return {
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        unlink(socketPath).catch(() => undefined);
      }),
  };
}

/**
 * Sends a command to the server listening on `socketPath`.
 * Resolves undefined when no server answers there (no socket, or a stale one).
 */
export function sendControlRequest(
  socketPath: string,
  request: ControlRequest,
): Promise<CommandOutput | undefined> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    let connected = false;
    let response = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.on('data', (chunk: string) => {
      response += chunk;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected && ['ENOENT', 'ECONNREFUSED', 'ENOTSOCK'].includes(error.code ?? '')) resolve(undefined);
      else reject(error);
    });
    socket.on('end', () => {
      try {
        resolve(JSON.parse(response) as CommandOutput);
      } catch {
        reject(new Error('the server closed the control connection without an answer'));
      }
    });
  });
}
