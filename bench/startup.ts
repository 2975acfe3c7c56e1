/**
 * Start-up scenarios: how long a new server process takes to answer its first `/health/ready`
 * (with an empty database and an existing one, on PGlite and on PostgreSQL), and how long an `idp`
 * command takes from its start to its exit. Each is started again and again, the scenarios in
 * turn, and the median is reported. The processes may use every core, as a start does: the load
 * generator's pinning does not apply to them.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { projectRoot } from '../src/lib/paths.js';
import { cpuMicros, hasTaskset, median, stop } from './harness.js';

export interface StartupMeasurement {
  scenario: string;
  /** Wall time of each run, in ms, in the order they ran. */
  runsMs: number[];
  medianMs: number;
  /** The server's CPU time (user + system, all its threads) up to its first answer, median; null for a command. */
  cpuMs: number | null;
  /** The target the median is judged against, if the scenario has one. */
  targetMs?: number;
}

/** An existing data directory answers within 2 s of the process's start; a command ends within 0.5 s. */
export const SERVER_TARGET_MS = 2000;
export const CLI_TARGET_MS = 500;

const cores = os.cpus().length;

/** Starts `node …args` free to use every core, whatever this process is pinned to. */
function spawnUnpinned(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const [file, argv] = hasTaskset
    ? ['taskset', ['-c', `0-${cores - 1}`, process.execPath, ...args]]
    : [process.execPath, args];
  return spawn(file, argv, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The environment of a measured process: the compiled build, the given database and nothing of ours. */
function environment(
  database: Record<string, string>,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const { DATABASE_URL: _url, DATA_DIR: _dir, ...inherited } = process.env;
  return {
    ...inherited,
    IDP_RUN_BUILD: '1',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'development',
    ...database,
    ...extra,
  };
}

/** Starts the server and resolves once /health/ready answers 200 (polled every 5 ms). */
async function startServer(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; ms: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawnUnpinned(['bin/server.js'], { ...env, HOST: '127.0.0.1', PORT: String(port) });
  let output = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output}`);
      if (performance.now() - started > 120_000) throw new Error(`no answer after 120 s:\n${output}`);
      const ready = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) return { child, ms: performance.now() - started };
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } catch (error) {
    await stop(child);
    throw error;
  }
}

/** Times a server's start to its first ready answer, with its CPU time until then; then stops it. */
async function timeServer(env: NodeJS.ProcessEnv): Promise<{ ms: number; cpuMs: number | null }> {
  const { child, ms } = await startServer(env);
  try {
    const cpu = cpuMicros(child.pid);
    return { ms, cpuMs: cpu === undefined ? null : Math.round(cpu / 1000) };
  } finally {
    await stop(child);
  }
}

/** Runs `idp …args` and times it from its start to its exit (which must be 0). */
async function timeCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; cpuMs: null }> {
  const started = performance.now();
  const child = spawnUnpinned(['bin/idp.js', ...args], env);
  let output = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stdout?.resume();
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`idp ${args.join(' ')} exited with ${code}:\n${output}`);
  return { ms: performance.now() - started, cpuMs: null };
}

interface Scenario {
  scenario: string;
  targetMs?: number;
  /** One run; `round` numbers the runs from 0. */
  run(round: number): Promise<{ ms: number; cpuMs: number | null }>;
}

/**
 * Measures every start-up scenario `runs` times, in interleaved rounds. `postgresUrl` is the
 * PostgreSQL server's URL; each run that needs an empty database gets a new one there, dropped
 * at the end.
 */
export async function measureStartup(runs: number, postgresUrl: string): Promise<StartupMeasurement[]> {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'idp-bench-startup-'));
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  const prefix = `idp_bench_start_${randomBytes(3).toString('hex')}`;
  const databases: string[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const databaseUrl = async (name: string) => {
    await admin.query(`create database ${name}`);
    databases.push(name);
    const url = new URL(postgresUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  try {
    // The existing databases: made by a first start, with one client registered.
    const existingDir = path.join(folder, 'existing');
    const existingUrl = await databaseUrl(`${prefix}_existing`);
    const existing: Array<Record<string, string>> = [
      { DATA_DIR: existingDir },
      { DATABASE_URL: existingUrl },
    ];
    for (const database of existing) {
      await timeServer(environment(database));
      execFileSync(
        process.execPath,
        [
          'bin/idp.js',
          'clients',
          'create',
          '--name',
          'Bench',
          '--site-url',
          'http://127.0.0.1:9',
          '--redirect-uri',
          'http://127.0.0.1:9/cb',
        ],
        { cwd: projectRoot, env: environment(database), stdio: 'ignore' },
      );
    }
    // A PGlite data directory whose server runs throughout: a command is handed to it through its
    // socket in DATA_DIR rather than opening the embedded database itself.
    const servedDir = path.join(folder, 'served');
    const served = await startServer(environment({ DATA_DIR: servedDir }));
    cleanups.push(() => stop(served.child));
    const scenarios: Scenario[] = [
      {
        scenario: 'server start to /health/ready, existing PGlite data directory',
        targetMs: SERVER_TARGET_MS,
        run: () => timeServer(environment({ DATA_DIR: existingDir })),
      },
      {
        scenario: 'server start to /health/ready, existing PostgreSQL database',
        targetMs: SERVER_TARGET_MS,
        run: () => timeServer(environment({ DATABASE_URL: existingUrl })),
      },
      {
        scenario: 'server start to /health/ready, empty PGlite data directory (initdb, migrations, keys)',
        run: (round) => timeServer(environment({ DATA_DIR: path.join(folder, `fresh-${round}`) })),
      },
      {
        scenario: 'server start to /health/ready, empty PostgreSQL database (migrations, keys)',
        run: async (round) =>
          timeServer(environment({ DATABASE_URL: await databaseUrl(`${prefix}_fresh_${round}`) })),
      },
      {
        scenario:
          'server start, existing PGlite data directory, from the sources through tsx (IDP_RUN_BUILD=0)',
        run: () => timeServer(environment({ DATA_DIR: existingDir }, { IDP_RUN_BUILD: '0' })),
      },
      {
        scenario: '`idp --help`',
        targetMs: CLI_TARGET_MS,
        run: () => timeCli(['--help'], environment({})),
      },
      {
        scenario: '`idp clients list --json`, existing PGlite data directory, no server running',
        targetMs: CLI_TARGET_MS,
        run: () => timeCli(['clients', 'list', '--json'], environment({ DATA_DIR: existingDir })),
      },
      {
        scenario:
          '`idp clients list --json`, PGlite data directory with its server running (through its socket)',
        targetMs: CLI_TARGET_MS,
        run: () => timeCli(['clients', 'list', '--json'], environment({ DATA_DIR: servedDir })),
      },
      {
        scenario: '`idp clients list --json`, existing PostgreSQL database',
        targetMs: CLI_TARGET_MS,
        run: () => timeCli(['clients', 'list', '--json'], environment({ DATABASE_URL: existingUrl })),
      },
    ];
    const times = scenarios.map(() => [] as Array<{ ms: number; cpuMs: number | null }>);
    for (let round = 0; round < runs; round++) {
      for (const [index, scenario] of scenarios.entries()) times[index]?.push(await scenario.run(round));
    }
    return scenarios.map((scenario, index) => {
      const measured = times[index] ?? [];
      const cpu = measured.flatMap((each) => (each.cpuMs === null ? [] : [each.cpuMs]));
      const result: StartupMeasurement = {
        scenario: scenario.scenario,
        runsMs: measured.map((each) => Math.round(each.ms)),
        medianMs: Math.round(median(measured.map((each) => each.ms))),
        cpuMs: cpu.length > 0 ? Math.round(median(cpu)) : null,
        ...(scenario.targetMs ? { targetMs: scenario.targetMs } : {}),
      };
      console.log(JSON.stringify(result));
      return result;
    });
  } finally {
    for (const cleanup of cleanups) await cleanup();
    for (const name of databases) await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The verdict of each scenario with a target. */
export function judgeStartup(rows: readonly StartupMeasurement[]) {
  return rows.flatMap((row) =>
    row.targetMs === undefined
      ? []
      : [
          {
            target: `${row.scenario} ≤ ${row.targetMs / 1000} s`,
            measured: `${row.medianMs} ms (median of ${row.runsMs.length})`,
            pass: row.medianMs <= row.targetMs,
          },
        ],
  );
}

/** The start-up section of results.md. */
export function startupSection(rows: readonly StartupMeasurement[], load?: [number, number]): string[] {
  if (rows.length === 0) return [];
  const busy = load
    ? ` The machine's load average was ${load[0].toFixed(1)} before and ${load[1].toFixed(1)} after (other work shared its ${cores} cores).`
    : '';
  return [
    '## Start-up',
    '',
    `From the process's start to the server's first successful \`/health/ready\` answer, or to the command's exit; the compiled build (as the image and \`npm start\` run it) unless the scenario says otherwise. CPU ms is the server's CPU time up to that answer, all its threads: it depends less than the wall time on what else the machine runs. Each run is a new process; the scenarios take turns, and the median run is shown.${busy}`,
    '',
    '| scenario | median ms | CPU ms | target | runs (ms) |',
    '|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.scenario} | ${row.medianMs} | ${row.cpuMs ?? '–'} | ${row.targetMs === undefined ? '–' : `≤ ${row.targetMs} ms`} | ${row.runsMs.join(', ')} |`,
    ),
    '',
  ];
}
