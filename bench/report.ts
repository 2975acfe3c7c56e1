/**
 * Renders `bench/results.md` from the measurements of a run (`bench/results.json`), with every
 * target of the benchmark judged pass or fail. `npm run bench:report` renders it again from the
 * file alone.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/lib/paths.js';
import type { LedgerCheck } from '../src/modules/wallet/wallet.service.js';
import { type Measurement, roundRatio } from './harness.js';
import { SEARCH_QUERIES } from './search.js';
import { judgeStartup, type StartupMeasurement, startupSection } from './startup.js';

/** A closed-loop scenario (bench/flows.ts): completed flows per second. */
export interface FlowMeasurement {
  scenario: string;
  workers: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
  runs: number[];
  firstFailure?: string | undefined;
}

export interface BenchResults {
  measuredAt: string;
  smoke: boolean;
  machine: {
    cores: number;
    node: string;
    pinned: boolean;
    /** RSA-2048 signatures per second on the server's core (`openssl speed`), where openssl exists. */
    rsa2048SignsPerSecond?: number | null;
  };
  settings: {
    seconds: number;
    warmupSeconds: number;
    runs: number;
    connections: number;
    searchConnections: number;
    searchSizes: number[];
  };
  measurements: Measurement[];
  flows: FlowMeasurement[];
  searchPlans: Record<string, string>;
  ledgerChecks: { postgres?: LedgerCheck; pglite?: LedgerCheck };
  /** Resident memory of the service on PostgreSQL (MiB): idle after start, and the highest under load. */
  memory: { idleRssMb: number; peakRssMb: number } | null;
  /** Start-up scenarios (bench/startup.ts), when this run measured them. */
  startup?: StartupMeasurement[];
  /** When they were measured, if in a later run than the rest (`BENCH_ONLY=startup`). */
  startupMeasuredAt?: string;
  /** The machine's 1-minute load average before and after the start-up scenarios. */
  startupLoadAverage?: [number, number];
}

export interface TargetVerdict {
  target: string;
  measured: string;
  pass: boolean;
}

const find = (json: BenchResults, target: Measurement['target'], prefix: string) =>
  json.measurements.find((row) => row.target === target && row.scenario.startsWith(prefix));
const times = (ratio: number) => `${ratio.toFixed(2)}×`;

/** Every target of the benchmark that this run measured, judged. */
export function judgeTargets(json: BenchResults): TargetVerdict[] {
  const verdicts: TargetVerdict[] = [];
  const ceiling = find(json, 'ceiling', 'bare Fastify');
  const compare = (prefix: string, label: string, factor: number) => {
    const ours = find(json, 'idp', prefix);
    const theirs = find(json, 'oidc-provider', prefix);
    if (!ours || !theirs) return;
    const ratio = roundRatio(ours, theirs);
    verdicts.push({
      target: `${label} ≥ ${factor}× oidc-provider's`,
      measured: `${ours.requestsPerSecond}/s against ${theirs.requestsPerSecond}/s: ${times(ratio)}`,
      pass: ratio >= factor,
    });
  };
  compare('userinfo', 'userinfo', 5);
  const userinfo = find(json, 'idp', 'userinfo');
  if (userinfo && ceiling) {
    const ratio = roundRatio(userinfo, ceiling);
    verdicts.push({
      target: 'userinfo ≥ 50% of the bare-route ceiling',
      measured: `${userinfo.requestsPerSecond}/s against ${ceiling.requestsPerSecond}/s: ${(ratio * 100).toFixed(0)}%`,
      pass: ratio >= 0.5,
    });
  }
  compare('authorization code exchange', 'code exchange', 2);
  compare('refresh token grant', 'refresh grant', 2);
  const signIns = json.flows.find((flow) => flow.scenario.startsWith('password sign-in'));
  if (signIns) {
    // The server is pinned to one core; unpinned, it may use them all.
    const cores = json.machine.pinned ? 1 : json.machine.cores;
    const perCore = signIns.perSecond / cores;
    verdicts.push({
      target: 'password sign-ins ≥ 15/s per core (argon2id m=19 MiB, t=2, p=1)',
      measured: `${perCore.toFixed(1)}/s per core`,
      pass: perCore >= 15 && signIns.failures === 0,
    });
  }
  const sizes = json.settings.searchSizes;
  const largest = sizes.at(-1);
  const smallest = sizes[0];
  const rated = (query: string, size: number | undefined) =>
    json.measurements.find(
      (row) =>
        row.scenario.includes(`("${query}")`) &&
        row.scenario.endsWith(
          `${size?.toLocaleString('en')} users, ${json.settings.searchConnections} clients`,
        ),
    );
  for (const query of SEARCH_QUERIES) {
    const large = rated(query.q, largest);
    if (!large) continue;
    verdicts.push({
      target: `search p99 < 50 ms at ${largest?.toLocaleString('en')} users (${query.name})`,
      measured: `${large.p99Ms} ms`,
      pass: large.p99Ms < 50,
    });
    const small = rated(query.q, smallest);
    if (small && sizes.length >= 2) {
      // autocannon reports whole milliseconds; a 0 ms median counts as 1 ms.
      const ratio = large.p50Ms / Math.max(small.p50Ms, 1);
      verdicts.push({
        target: `search median at ${largest?.toLocaleString('en')} ≤ 2× the median at ${smallest?.toLocaleString('en')} (${query.name})`,
        measured: `${large.p50Ms} ms against ${small.p50Ms} ms: ${times(ratio)}`,
        pass: ratio <= 2,
      });
    }
  }
  const spread = find(json, 'idp', 'wallet charges over');
  const hot = find(json, 'idp', 'wallet charges on one hot wallet');
  if (spread) {
    verdicts.push({
      target: 'charges ≥ 1,500/s over many users',
      measured: `${spread.requestsPerSecond}/s`,
      pass: spread.requestsPerSecond >= 1500 && spread.non2xx === 0,
    });
  }
  if (hot) {
    verdicts.push({
      target: 'charges ≥ 300/s on one hot wallet',
      measured: `${hot.requestsPerSecond}/s`,
      pass: hot.requestsPerSecond >= 300 && hot.non2xx === 0,
    });
  }
  if (json.ledgerChecks.postgres) {
    const check = json.ledgerChecks.postgres;
    verdicts.push({
      target: 'ledger invariant after the charges',
      measured: `${check.wallets_checked} wallets, ${check.mismatches.length} mismatches`,
      pass: check.ok,
    });
  }
  if (json.memory) {
    verdicts.push({
      target: 'idle RSS < 150 MB',
      measured: `${json.memory.idleRssMb} MiB (${(json.memory.idleRssMb * 1.048576).toFixed(0)} MB)`,
      pass: json.memory.idleRssMb * 1.048576 < 150,
    });
  }
  verdicts.push(...judgeStartup(json.startup ?? []));
  const failed = json.measurements.reduce((sum, row) => sum + row.non2xx, 0);
  const flowFailures = json.flows.reduce((sum, flow) => sum + flow.failures, 0);
  verdicts.push({
    target: 'no failed request (non-2xx, error) in any scenario',
    measured: `${failed} failed requests, ${flowFailures} failed flows`,
    pass: failed === 0 && flowFailures === 0,
  });
  return verdicts;
}

/**
 * For each missed target, where the time goes in this run: the server's and PostgreSQL's CPU per
 * request, against the baselines. (The causes were found with CPU profiles, BENCH_PROFILE=1, and
 * are explained in docs/performance.md.)
 */
export function whatRemains(json: BenchResults, verdicts: TargetVerdict[]): string[] {
  const missed = (prefix: string) =>
    verdicts.some((verdict) => !verdict.pass && verdict.target.startsWith(prefix));
  const cpu = (row: Measurement | undefined) => row?.cpuMicrosPerRequest ?? '?';
  const database = (row: Measurement | undefined) => row?.postgresCpuMicrosPerRequest ?? '?';
  const lines: string[] = [];
  const ceiling = find(json, 'ceiling', 'bare Fastify');
  if (missed('userinfo')) {
    const ours = find(json, 'idp', 'userinfo');
    const theirs = find(json, 'oidc-provider', 'userinfo');
    lines.push(
      `- **userinfo**: ${cpu(ours)} µs of the server's CPU per request, against ${cpu(ceiling)} µs for the bare route and ${cpu(theirs)} µs for oidc-provider. No database round trip is left (the token cache answers, PostgreSQL ${database(ours)} µs per request). What remains is the fixed cost of a request in the service — request id, child logger, security headers, rate limit, cookies, metrics, serialization — one to a few µs each, measured by taking them out one at a time.`,
    );
  }
  if (missed('code exchange')) {
    const ours = find(json, 'idp', 'authorization code exchange');
    const theirs = find(json, 'oidc-provider', 'authorization code exchange');
    const rsa = json.machine.rsa2048SignsPerSecond;
    lines.push(
      `- **code exchange**: ${cpu(ours)} µs of the server's CPU per exchange, against ${cpu(theirs)} µs for oidc-provider. Both sign one RS256 id_token per exchange${rsa ? `, and one RSA-2048 signature costs ${Math.round(1_000_000 / rsa)} µs on this core (openssl speed: ${Math.round(rsa)}/s)` : ''}: twice oidc-provider's rate would leave less time per exchange than the signature itself.`,
    );
  }
  if (missed('refresh')) {
    const ours = find(json, 'idp', 'refresh token grant');
    const theirs = find(json, 'oidc-provider', 'refresh token grant');
    lines.push(
      `- **refresh grant**: ${cpu(ours)} µs of the server's CPU per refresh (one statement), against ${cpu(theirs)} µs for oidc-provider, which keeps its tokens in memory and writes nothing durable; PostgreSQL spends ${database(ours)} µs per refresh on the same two cores as the load generator, and bounds the rate.`,
    );
  }
  if (missed('charges')) {
    const spread = find(json, 'idp', 'wallet charges over');
    lines.push(
      `- **charges**: ${cpu(spread)} µs of the server's CPU per charge, and ${database(spread)} µs of PostgreSQL's (the charge function: the idempotency key, the balance, the ledger entry and the audit event, committed durably), on the same two cores as the load generator: the database bounds the rate.`,
    );
  }
  if (missed('search')) lines.push('- **search**: see the plans below.');
  if (missed('server start') || missed('`idp'))
    lines.push(
      '- **start-up**: see the Start-up section\'s CPU times, and docs/performance.md "Start-up": a command on the embedded database opens it itself (the start of PGlite, its WebAssembly compiled and PostgreSQL started, about 0.3 s), and with the modules it stays above 0.5 s; with a running server a command goes through the socket of the server instead.',
    );
  if (missed('idle RSS')) lines.push('- **memory**: see the Memory section.');
  return lines;
}

function measurementTable(rows: Measurement[], ceiling: Measurement | undefined): string[] {
  return [
    '| scenario | server | req/s | p50 ms | p99 ms | failed | CPU µs/request | PostgreSQL CPU µs/request | of ceiling | runs |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((row) => {
      const ofCeiling =
        ceiling && row !== ceiling && row.runs.length === ceiling.runs.length
          ? `${(roundRatio(row, ceiling) * 100).toFixed(1)}%`
          : '–';
      return `| ${row.scenario} | ${row.target} | ${row.requestsPerSecond} | ${row.p50Ms} | ${row.p99Ms} | ${row.non2xx} | ${row.cpuMicrosPerRequest ?? '–'} | ${row.target === 'idp' ? (row.postgresCpuMicrosPerRequest ?? '–') : '–'} | ${ofCeiling} | ${row.runs.join(', ')} |`;
    }),
  ];
}

export function renderMarkdown(json: BenchResults): string {
  const { settings } = json;
  const ceiling = find(json, 'ceiling', 'bare Fastify');
  const compared = json.measurements.filter(
    (row) =>
      !row.scenario.startsWith('search') &&
      !row.scenario.startsWith('wallet') &&
      row.target !== 'idp (PGlite)',
  );
  const lines = [
    '# Benchmark results',
    '',
    `Measured ${json.measuredAt} on ${json.machine.cores} cores, Node ${json.machine.node}; ${json.machine.pinned ? 'each server pinned to core 0, the load generator to core 1' : 'not pinned (no taskset)'}; PostgreSQL on the same machine. ${settings.runs} interleaved rounds of ${settings.seconds} s per scenario after ${settings.warmupSeconds} s of warm-up, ${settings.connections} connections; the median run is shown. Ratios are taken round by round (each run against the other side's run of the same round), then their median.${json.smoke ? ' **Smoke run**: a second per scenario, no targets judged.' : ''}`,
    '',
  ];
  if (!json.smoke) {
    const verdicts = judgeTargets(json);
    lines.push(
      '## Targets',
      '',
      '| target | measured | verdict |',
      '|---|---|---|',
      ...verdicts.map(
        (verdict) => `| ${verdict.target} | ${verdict.measured} | ${verdict.pass ? 'pass' : '**fail**'} |`,
      ),
      '',
      ...(verdicts.some((verdict) => !verdict.pass)
        ? [
            'Where a target is missed, in this run:',
            '',
            ...whatRemains(json, verdicts),
            '',
            '[docs/performance.md](../docs/performance.md) says what was done about each (from CPU profiles of the server, `BENCH_PROFILE=1`) and why the rest remains.',
            '',
          ]
        : []),
    );
  }
  lines.push(
    ...(json.startupMeasuredAt
      ? [`Start-up measured ${json.startupMeasuredAt}, the rest ${json.measuredAt}.`, '']
      : []),
    ...startupSection(json.startup ?? [], json.startupLoadAverage),
  );
  lines.push(
    '## Against the ceiling and oidc-provider',
    '',
    "The ceiling is a bare Fastify JSON route (bench/ceiling-server.mjs). oidc-provider 9 runs with an in-memory store, an RS256 key, opaque access tokens, PKCE and refresh tokens rotated on every use (bench/oidc-provider-server.mjs says why each choice). The service runs from its compiled build with `NODE_ENV=production` and `LOG_LEVEL=warn`, its rate limiter counting every request. CPU µs/request is the server process's CPU time (user + system) over the requests it answered: unlike requests per second, it does not depend on the load generator keeping up. PostgreSQL CPU µs/request is the same for every PostgreSQL process of the machine, which shares the two cores with the load generator: where the service is far from using its core, the database is the bound.",
    '',
    ...measurementTable(compared, ceiling),
    '',
  );
  if (json.flows.length > 0) {
    lines.push(
      '## Flows',
      '',
      "Closed loops: each worker starts its next flow when the last one ends. The sign-in flow is a signed-in browser going through the authorize URL (PKCE, state, nonce, `prompt=consent`), the consent form, the redirect with the code, then the site's backend exchanging the code and calling userinfo. Password sign-ins are the sign-in page and its form, with argon2id at m=19 MiB, t=2, p=1 (OWASP's minimum), on one core.",
      '',
      '| flow | workers | per second | p50 ms | p99 ms | failed | runs |',
      '|---|---|---|---|---|---|---|',
      ...json.flows.map(
        (flow) =>
          `| ${flow.scenario} | ${flow.workers} | ${flow.perSecond} | ${flow.p50Ms} | ${flow.p99Ms} | ${flow.failures}${flow.firstFailure ? ` (${flow.firstFailure})` : ''} | ${flow.runs.join(', ')} |`,
      ),
      '',
    );
  }
  const wallet = json.measurements.filter(
    (row) => row.scenario.startsWith('wallet') || row.target === 'idp (PGlite)',
  );
  if (wallet.length > 0) {
    lines.push(
      '## Wallet, and the embedded database',
      '',
      'Charges of 0.01 coin with a fresh idempotency key each, spread over every user and then all on one wallet; then the same and userinfo on PGlite, the embedded default (one process, no PostgreSQL server).',
      '',
      ...measurementTable(wallet, undefined),
      '',
      ...Object.entries(json.ledgerChecks).map(
        ([where, check]) =>
          `Ledger check after the charges on ${where}: ${check.ok ? 'pass' : 'FAIL'} (${check.wallets_checked} wallets, ${check.mismatches.length} mismatches).`,
      ),
      '',
    );
  }
  if (json.memory) {
    lines.push(
      '## Memory',
      '',
      `Resident set size of the service on PostgreSQL: ${json.memory.idleRssMb} MiB idle after start, at most ${json.memory.peakRssMb} MiB under the load of this run.`,
      '',
    );
  }
  const search = json.measurements.filter((row) => row.scenario.startsWith('search'));
  if (search.length > 0) {
    lines.push(
      '## Search',
      '',
      `With ${settings.connections} connections the server is saturated (capacity; latency is only queueing); with ${settings.searchConnections} clients searching at once, latency is the search's own.`,
      '',
      ...measurementTable(search, undefined),
      '',
      'Plans of the search query (EXPLAIN ANALYZE, costs and timing off):',
      '',
      ...Object.entries(json.searchPlans).flatMap(([name, plan]) => [
        `### ${name}`,
        '',
        '```',
        plan,
        '```',
        '',
      ]),
    );
  }
  return lines.join('\n');
}

/** Writes results.json and results.md into `dir`. */
export function writeResults(json: BenchResults, dir: string): void {
  writeFileSync(path.join(dir, 'results.json'), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(path.join(dir, 'results.md'), renderMarkdown(json));
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const dir = path.join(projectRoot, 'bench');
  const json = JSON.parse(readFileSync(path.join(dir, 'results.json'), 'utf8')) as BenchResults;
  writeFileSync(path.join(dir, 'results.md'), renderMarkdown(json));
}
