/**
 * The parts of the benchmark that start processes and load them: pinning, autocannon runs, the
 * CPU time and resident memory of a server, and interleaved rounds of scenarios.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { projectRoot } from '../src/lib/paths.js';
import { type WalProbe, walPerRequest } from './wal.js';

export const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return true;
  } catch {
    return false;
  }
})();

/** Pins this process (and so autocannon, which runs in it) to core 1, where there is one. */
export function pinLoadGenerator(): void {
  if (hasTaskset) execFileSync('taskset', ['-cp', '1', String(process.pid)]);
}

/** Starts a server process on core 0 (where taskset exists). */
export function startPinned(command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const [file, argv] = hasTaskset ? ['taskset', ['-c', '0', command, ...args]] : [command, args];
  return spawn(file, argv, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Resident set size of a process in MiB, from /proc (0 where there is no /proc). */
export function rssMb(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Math.round(Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024);
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a process has used, in µs, from /proc; undefined where there is none. */
export function cpuMicros(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the command name; in ticks.
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * CPU time (µs) used so far by every PostgreSQL process of this machine (server processes are
 * named `postgres`); undefined without /proc. Exited backends are not counted, which is why the
 * service's pool keeps its connections open.
 */
export function postgresCpuMicros(): number | undefined {
  try {
    let total = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (!stat.includes('(postgres)')) continue;
        const fields = stat.split(') ')[1]?.split(' ') ?? [];
        total += ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
      } catch {
        // the process exited
      }
    }
    return total;
  } catch {
    return undefined;
  }
}

/** Waits for `Server listening at <url>` on a child's stdout. */
export async function waitForListening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /Server listening at (http:\/\/[\d.:]+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
}

/** Waits until `url` answers 2xx. */
export async function waitForPort(url: string, child?: ChildProcess): Promise<void> {
  let output = '';
  child?.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer:\n${output}`);
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** What one autocannon scenario sends. */
export interface LoadOptions {
  method?: 'GET' | 'POST';
  /** Concurrent connections; default 32. */
  connections?: number;
  /** Sends this many requests and stops, instead of running for the given seconds. */
  amount?: number;
  /** At most this many requests a second over all connections (default: as fast as answered). */
  overallRate?: number;
  /** Gives each request its headers and body (for values used once: codes, refresh tokens, keys). */
  next?: () => { headers?: Record<string, string>; body?: string };
  /**
   * The answer every request must get, when it is not a 2xx (a device's poll is answered 400
   * authorization_pending): any other status, or a body `body` refuses, counts as failed.
   */
  expect?: { status: number; body: (body: string) => boolean };
}

/** One autocannon run of `seconds`. */
export async function load(url: string, options: LoadOptions, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    method: options.method ?? 'GET',
    connections: options.connections ?? 32,
    duration: seconds,
    ...(options.amount !== undefined ? { amount: options.amount } : {}),
    ...(options.overallRate !== undefined ? { overallRate: options.overallRate } : {}),
    ...(options.expect
      ? {
          verifyBody: (body: string | Buffer | undefined) =>
            options.expect?.body(String(body ?? '')) === true,
        }
      : {}),
    requests: [
      {
        setupRequest: (request) => {
          const extra = options.next?.() ?? {};
          return { ...request, headers: { ...request.headers, ...extra.headers }, body: extra.body };
        },
      },
    ],
  });
}

/**
 * The requests of a run that failed: not answered (errors), or answered otherwise than expected
 * (any status but a 2xx; with `expect`, any status but its own, or a body it refuses).
 */
export function failedRequests(result: autocannon.Result, expected?: LoadOptions['expect']): number {
  if (!expected) return result.non2xx + result.errors;
  const answered = result.statusCodeStats?.[`${expected.status}`]?.count ?? 0;
  return result.requests.total - answered + result.mismatches + result.errors;
}

/** Which process a scenario loads. */
export type Target = 'idp' | 'idp (PGlite)' | 'oidc-provider' | 'ceiling';

export interface Scenario {
  name: string;
  target: Target;
  url: string;
  options: LoadOptions;
  /** The server process, for its CPU time. */
  pid: number | undefined;
}

/** The runs of one scenario and their median. */
export interface Measurement {
  scenario: string;
  target: Target;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Requests per second of each run, in round order. */
  runs: number[];
  /** The server's CPU time per request (µs), median over the runs; null without /proc. */
  cpuMicrosPerRequest: number | null;
  /** PostgreSQL's CPU time per request (µs, all its processes), median over the runs. */
  postgresCpuMicrosPerRequest?: number | null;
  /**
   * WAL written per request (bytes, and full-page images), median over the runs: cluster-wide
   * (bench/wal.ts); null or absent where not measured (other targets than 'idp', PGlite).
   */
  walBytesPerRequest?: number | null;
  walFpiPerRequest?: number | null;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export { median };

/**
 * Measures scenarios in interleaved rounds: a warm-up of each, then `runs` rounds that each run
 * every scenario once, in order. A scenario's figure is its median run; scenarios compared with
 * each other (ours against oidc-provider's, against the ceiling) are compared round by round, so
 * that a machine that slows down for a minute slows both sides of a ratio.
 */
export async function measureRounds(
  scenarios: Scenario[],
  settings: { seconds: number; warmupSeconds: number; runs: number },
  onRun?: () => void,
  /** Reads PostgreSQL's WAL counters around each run of a scenario of target 'idp'. */
  wal?: WalProbe,
): Promise<Measurement[]> {
  if (settings.warmupSeconds > 0) {
    for (const scenario of scenarios) await load(scenario.url, scenario.options, settings.warmupSeconds);
  }
  type Run = {
    result: autocannon.Result;
    cpu: number | null;
    postgres: number | null;
    wal: { bytes: number; fpi: number } | null;
  };
  const results = scenarios.map(() => [] as Run[]);
  for (let round = 0; round < settings.runs; round++) {
    for (const [i, scenario] of scenarios.entries()) {
      const probe = scenario.target === 'idp' ? wal : undefined;
      const walBefore = (await probe?.()) ?? null;
      const before = cpuMicros(scenario.pid);
      const postgresBefore = postgresCpuMicros();
      const result = await load(scenario.url, scenario.options, settings.seconds);
      const after = cpuMicros(scenario.pid);
      const postgresAfter = postgresCpuMicros();
      const walAfter = (await probe?.()) ?? null;
      const requests = result.requests.total;
      const perRequest = (from: number | undefined, to: number | undefined) =>
        from !== undefined && to !== undefined && requests > 0 ? (to - from) / requests : null;
      results[i]?.push({
        result,
        cpu: perRequest(before, after),
        postgres: perRequest(postgresBefore, postgresAfter),
        wal: walPerRequest(walBefore, walAfter, requests),
      });
      onRun?.();
    }
  }
  return scenarios.map((scenario, i) => {
    const runs = results[i] ?? [];
    const byRate = [...runs].sort((a, b) => a.result.requests.average - b.result.requests.average);
    const middle = byRate[Math.floor(byRate.length / 2)]?.result as autocannon.Result;
    const cpus = runs.map((run) => run.cpu).filter((cpu): cpu is number => cpu !== null);
    const postgres = runs.map((run) => run.postgres).filter((cpu): cpu is number => cpu !== null);
    const wals = runs.map((run) => run.wal).filter((wal) => wal !== null);
    const measurement: Measurement = {
      scenario: scenario.name,
      target: scenario.target,
      requestsPerSecond: Math.round(middle.requests.average),
      p50Ms: middle.latency.p50,
      p99Ms: middle.latency.p99,
      non2xx: runs.reduce((sum, run) => sum + failedRequests(run.result, scenario.options.expect), 0),
      runs: runs.map((run) => Math.round(run.result.requests.average)),
      cpuMicrosPerRequest: cpus.length > 0 ? Math.round(median(cpus)) : null,
      postgresCpuMicrosPerRequest: postgres.length > 0 ? Math.round(median(postgres)) : null,
      walBytesPerRequest: wals.length > 0 ? Math.round(median(wals.map((wal) => wal.bytes))) : null,
      walFpiPerRequest: wals.length > 0 ? Math.round(median(wals.map((wal) => wal.fpi)) * 100) / 100 : null,
    };
    console.log(JSON.stringify(measurement));
    return measurement;
  });
}

/** The median, over rounds, of `a`'s run divided by `b`'s run of the same round. */
export function roundRatio(a: Measurement, b: Measurement): number {
  return median(a.runs.map((run, round) => run / (b.runs[round] ?? Number.NaN)));
}
