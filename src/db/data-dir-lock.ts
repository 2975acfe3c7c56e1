import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

/**
 * An exclusive lock on a PGlite data directory. PGlite takes no lock of its own, and two processes
 * writing one directory corrupt it, so the server and the CLI hold this lock for as
 * long as they have the directory open.
 *
 * On Linux the lock is a listening socket in the abstract namespace named after the directory:
 * binding is atomic and the kernel releases it when the process dies, so a crash never leaves a
 * stale lock. Elsewhere it is a lock file holding the owner's pid, taken over when that pid is gone.
 */
export interface DataDirLock {
  release(): Promise<void>;
}

/** Unix socket paths are limited to 104 bytes on macOS and 108 on Linux, terminator included. */
const MAX_SOCKET_PATH_BYTES = 103;

/** Where a running server accepts CLI commands (see src/cli/control-socket.ts). */
export function controlSocketPath(dataDir: string): string {
  const socketPath = path.join(dataDir, 'idp.sock');
  const bytes = Buffer.byteLength(socketPath);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new Error(
      `DATA_DIR ${dataDir} is too long for its control socket (${bytes} bytes with /idp.sock, at most ${MAX_SOCKET_PATH_BYTES}); use a shorter DATA_DIR`,
    );
  }
  return socketPath;
}

/** Whether a server answers on the control socket (it may run in another container on a shared volume). */
function serverAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.createConnection(socketPath);
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolve(true); // something holds the socket open: do not touch the directory
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Takes the lock, or returns null when another process holds it. The abstract socket is private to
 * one network namespace, so a server in another container on the same volume is found by its
 * control socket, a file inside the directory.
 */
export async function tryLockDataDir(dataDir: string): Promise<DataDirLock | null> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const canonical = realpathSync(dataDir);
  const socketPath = controlSocketPath(canonical);
  const lock =
    process.platform === 'linux' ? await tryAbstractSocketLock(canonical) : await tryPidFileLock(canonical);
  if (lock && (await serverAnswers(socketPath))) {
    await lock.release();
    return null;
  }
  return lock;
}

function tryAbstractSocketLock(canonicalDir: string): Promise<DataDirLock | null> {
  const name = `\0idp-data-dir-${createHash('sha256').update(canonicalDir).digest('hex').slice(0, 40)}`;
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(null);
      else reject(error);
    });
    server.listen({ path: name }, () => {
      server.unref();
      resolve({ release: () => new Promise((done) => server.close(() => done())) });
    });
  });
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return false; // a pid file of ours from before a restart (pid 1 in a container)
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function tryPidFileLock(canonicalDir: string): Promise<DataDirLock | null> {
  const file = path.join(canonicalDir, 'idp.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return {
        release: async () => {
          try {
            unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(owner) && isAlive(owner)) return null;
      unlinkSync(file); // stale: its owner is gone
    }
  }
  return null;
}

/** Waits up to `timeoutMs` for the lock (a CLI command holding it finishes in moments). */
export async function lockDataDir(dataDir: string, timeoutMs: number): Promise<DataDirLock | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lock = await tryLockDataDir(dataDir);
    if (lock || Date.now() >= deadline) return lock;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Why this process cannot use `dataDir`, in words an operator can act on, or undefined when it can:
 * the directory is created if missing, then a file is written in it and removed. Checked before the
 * embedded database opens it, whose own error for an unwritable directory is only an errno.
 */
export async function dataDirProblem(dataDir: string): Promise<string | undefined> {
  const probe = path.join(dataDir, `.idp-write-test-${process.pid}`);
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await writeFile(probe, '');
    await rm(probe, { force: true });
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'an error';
    const uid = process.getuid?.();
    const who = uid === undefined ? 'this process' : `this process (uid ${uid})`;
    return (
      `DATA_DIR ${dataDir} is not writable by ${who}: ${code}. ` +
      `Make it a directory that user can write, e.g. \`chown -R ${uid ?? '<uid>'} ${dataDir}\` ` +
      '(the Docker image runs as uid 1000: `chown -R 1000` the directory mounted at /data), ' +
      'or set DATA_DIR to another directory, or DATABASE_URL to use PostgreSQL.'
    );
  }
}
