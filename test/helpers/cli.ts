import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { tryLockDataDir } from '../../src/db/data-dir-lock.js';
import { type DatabaseHandle, openPglite, openPostgres } from '../../src/db/database.js';
import {
  createEmptyPostgresDatabase,
  createMigratedPostgresDatabase,
  migratedTemplate,
  usingPostgres,
} from './database.js';
import { freePort } from './tcp-proxy.js';

/**
 * The real `idp` CLI and server, run as child processes the way an operator runs them
 * (`node bin/idp.js …`, `node bin/server.js`), from the root of the checkout.
 */
export const projectRoot = path.resolve(import.meta.dirname, '../..');

export interface ProcessResult {
  /** The exit status; null when the process was killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** The whole environment of the child (see `childEnv`): nothing else is inherited. */
  env: Record<string, string>;
  /** Written to the child's stdin, which is then closed. */
  stdin?: string;
  /** The child is killed (SIGKILL) when it runs longer than this. */
  timeoutMs?: number;
}

/** Every child still running, so that `stopAllChildren` can end them whatever a test did. */
const running = new Set<ChildProcess>();

/** PATH, HOME, NODE_ENV=test and `extra`: DATABASE_URL, DATA_DIR and the rest are never inherited. */
export function childEnv(extra: Record<string, string>): Record<string, string> {
  // The compiled build of this checkout, made once by test/global-setup.ts (see bin/launch.js).
  const env: Record<string, string> = { NODE_ENV: 'test', IDP_RUN_BUILD: '1' };
  if (process.env.PATH) env.PATH = process.env.PATH;
  if (process.env.HOME) env.HOME = process.env.HOME;
  return { ...env, ...extra };
}

function spawnNode(script: string, args: readonly string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [path.join(projectRoot, script), ...args], {
    cwd: projectRoot,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** Runs a node script of bin/ to completion and collects what it printed. */
export function runNode(
  script: string,
  args: readonly string[],
  options: RunOptions,
): Promise<ProcessResult> {
  const child = spawnNode(script, args, options.env);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  // A child that exits without reading its stdin closes the pipe under us: not an error here.
  child.stdin?.on('error', () => undefined);
  child.stdin?.end(options.stdin ?? '');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 45_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** `idp <args>`: the operator CLI. */
export function runIdp(args: readonly string[], options: RunOptions): Promise<ProcessResult> {
  return runNode('bin/idp.js', args, options);
}

export interface RunningServer {
  port: number;
  /** The base URL it listens on, as its log says: `http://127.0.0.1:<port>`. */
  url: string;
  child: ChildProcess;
  /** What it printed so far. */
  output(): { stdout: string; stderr: string };
  /** Sends SIGTERM and waits for the exit (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * How long a server may take to log that it listens. Measured on two cores at a load average of
 * 11: a start on an existing embedded database took 6 s (3.5 s of CPU), one on an empty DATA_DIR,
 * which runs initdb and every migration first, 21 to 24 s (10 to 11 s of CPU). The whole suite
 * shares the two cores between four test files, their children and Chromium, where a first start
 * went past 45 s: each limit is over ten times the CPU it needs.
 */
const START_TIMEOUT_MS = { existing: 45_000, emptyDataDir: 120_000 };

/** Whether the server of `env` starts on an embedded database that does not exist yet. */
function createsDataDir(env: Record<string, string>): boolean {
  if (env.DATABASE_URL || !env.DATA_DIR) return false;
  try {
    return readdirSync(env.DATA_DIR).length === 0;
  } catch {
    return true;
  }
}

/**
 * Starts `node bin/server.js` and resolves once its log says "Server listening at …".
 * Give it PORT=0 and HOST=127.0.0.1 (and LOG_LEVEL=info, or the line is never logged).
 */
export async function startServer(options: {
  env: Record<string, string>;
  timeoutMs?: number;
}): Promise<RunningServer> {
  // PORT=0 needs a PUBLIC_URL (the issuer); without one, choose a free port here and derive it.
  let env = options.env;
  if (env.PORT === '0' && !env.PUBLIC_URL) {
    const port = await freePort();
    env = { ...env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` };
  }
  return startServerWith(env, options.timeoutMs);
}

function startServerWith(serverEnv: Record<string, string>, timeoutMs?: number): Promise<RunningServer> {
  // Looked at before the child can create it.
  const startTimeoutMs =
    timeoutMs ?? (createsDataDir(serverEnv) ? START_TIMEOUT_MS.emptyDataDir : START_TIMEOUT_MS.existing);
  const options = { env: serverEnv, timeoutMs: startTimeoutMs };
  const child = spawnNode('bin/server.js', [], options.env);
  child.stdin?.end();
  let stdout = '';
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const stop = async (timeoutMs = 15_000) => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };

  return new Promise((resolve, reject) => {
    let lineBuffer = '';
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${message}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
    };
    const timer = setTimeout(
      () => fail('the server did not log "Server listening at" in time'),
      options.timeoutMs,
    );
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      lineBuffer += chunk;
      let newline = lineBuffer.indexOf('\n');
      while (newline !== -1) {
        const line = lineBuffer.slice(0, newline);
        lineBuffer = lineBuffer.slice(newline + 1);
        newline = lineBuffer.indexOf('\n');
        if (settled) continue;
        let entry: { msg?: unknown };
        try {
          entry = JSON.parse(line) as { msg?: unknown };
        } catch {
          continue; // not a pino line
        }
        const match =
          typeof entry.msg === 'string' ? /Server listening at (http:\/\/\S+)/.exec(entry.msg) : null;
        if (!match?.[1]) continue;
        settled = true;
        clearTimeout(timer);
        const url = match[1].replace(/\/+$/, '');
        resolve({
          port: Number(new URL(url).port),
          url,
          child,
          output: () => ({ stdout, stderr }),
          stop,
        });
      }
    });
    child.once('error', (error) => fail(`the server could not be spawned: ${error.message}`));
    child.once('exit', (code, signal) =>
      fail(`the server exited before listening (code ${code}, signal ${signal})`),
    );
  });
}

/** Kills (SIGKILL) every child still running: for afterAll, whatever the tests left behind. */
export async function stopAllChildren(): Promise<void> {
  const children = [...running];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/**
 * The one JSON object a `--json` command printed: stdout must be exactly one line holding one
 * JSON object. Throws, with the output, otherwise.
 */
export function parseJsonOutput(result: ProcessResult): Record<string, unknown> {
  const describe = () =>
    `code ${result.code}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
  const text = result.stdout.trim();
  if (text === '' || text.includes('\n'))
    throw new Error(`expected one line of JSON on stdout; ${describe()}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`stdout is not JSON; ${describe()}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`stdout is JSON but not an object; ${describe()}`);
  }
  return value as Record<string, unknown>;
}

/**
 * Makes `dataDir` a copy of the migrated embedded database of test/global-setup.ts: a child that
 * opens it finds its schema current, instead of running initdb and every migration (seconds of CPU
 * each, many more on a busy machine).
 */
export async function templateDataDir(dataDir: string): Promise<void> {
  await (await openPglite(dataDir, { from: await migratedTemplate() })).close();
}

/**
 * A fresh DATA_DIR (PGlite) or PostgreSQL database (TEST_DATABASE_URL) for one test file's children,
 * a copy of the migrated template unless `empty`: initdb and the migrations take seconds.
 */
export async function cliDatabase(
  prefix: string,
  extra: Record<string, string> = {},
  options: { empty?: boolean } = {},
): Promise<{ env: Record<string, string>; dataDir: string; drop: () => Promise<void> }> {
  if (usingPostgres) {
    const database = options.empty
      ? await createEmptyPostgresDatabase()
      : await createMigratedPostgresDatabase();
    return {
      env: childEnv({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', ...extra }),
      dataDir: '',
      drop: database.drop,
    };
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), prefix));
  if (!options.empty) await templateDataDir(dataDir);
  return {
    env: childEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extra }),
    dataDir,
    drop: () => rm(dataDir, { recursive: true, force: true }),
  };
}

/** A successful `--json` command: exit 0, nothing on stderr, exactly one JSON object on stdout. */
export function succeeded(result: ProcessResult): Record<string, unknown> {
  const json = parseJsonOutput(result);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return json;
}

/** A failed command: exit 1, nothing on stdout, an `idp: …` message on stderr matching `message`. */
export function failed(result: ProcessResult, message: RegExp): string {
  expect(result.stdout, `stdout of a failed command; stderr: ${result.stderr}`).toBe('');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/^idp: /);
  expect(result.stderr).toMatch(message);
  return result.stderr;
}

/**
 * Opens the database of `env` (its DATABASE_URL, or its DATA_DIR under the data-directory lock)
 * directly, between CLI runs: a CLI holds a PGlite directory only while it runs.
 */
export async function withCliDatabase<T>(
  env: Record<string, string>,
  work: (db: DatabaseHandle['db']) => Promise<T>,
): Promise<T> {
  let database: DatabaseHandle;
  let release: () => Promise<void> = async () => undefined;
  if (env.DATABASE_URL) {
    database = openPostgres({ url: env.DATABASE_URL, poolMax: 1 });
  } else {
    const dataDir = env.DATA_DIR as string;
    const lock = await tryLockDataDir(dataDir);
    if (!lock) throw new Error(`${dataDir} is still locked by another process`);
    release = () => lock.release();
    database = await openPglite(dataDir);
  }
  try {
    return await work(database.db);
  } finally {
    await database.close();
    await release();
  }
}
