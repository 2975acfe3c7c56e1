/**
 * Renders `bench/results.md` from the measurements of a run (`bench/results.json`), with every
 * target of the benchmark judged pass or fail. `npm run bench:report` renders it again from the
 * file alone.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/lib/paths.js';
import { type Measurement, roundRatio } from './harness.js';
import { whatRemains } from './remains.js';
import type { BenchResults } from './results.js';
import { scaleSection } from './scale.js';
import { startupSection } from './startup.js';
import { sustainedSection } from './sustained-report.js';
import { judgeTargets } from './targets.js';
import { WAL_NOTE } from './wal.js';

export { whatRemains } from './remains.js';
export type { BenchResults, FlowMeasurement } from './results.js';
export { judgeTargets, type TargetVerdict } from './targets.js';

const find = (json: BenchResults, target: Measurement['target'], prefix: string) =>
  json.measurements.find((row) => row.target === target && row.scenario.startsWith(prefix));

function measurementTable(rows: Measurement[], ceiling: Measurement | undefined): string[] {
  return [
    '| scenario | server | req/s | p50 ms | p99 ms | failed | CPU µs/request | PostgreSQL CPU µs/request | WAL bytes/request | of ceiling | runs |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((row) => {
      const ofCeiling =
        ceiling && row !== ceiling && row.runs.length === ceiling.runs.length
          ? `${(roundRatio(row, ceiling) * 100).toFixed(1)}%`
          : '–';
      return `| ${row.scenario} | ${row.target} | ${row.requestsPerSecond} | ${row.p50Ms} | ${row.p99Ms} | ${row.non2xx} | ${row.cpuMicrosPerRequest ?? '–'} | ${row.target === 'idp' ? (row.postgresCpuMicrosPerRequest ?? '–') : '–'} | ${row.walBytesPerRequest ?? '–'} | ${ofCeiling} | ${row.runs.join(', ')} |`;
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
    WAL_NOTE,
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
      `Charges of 0.01 coin with a fresh idempotency key each, spread over every user and then all on one wallet; then the same and userinfo on PGlite, the embedded default (one process, no PostgreSQL server). ${WAL_NOTE}`,
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
  lines.push(...sustainedSection(json.sustained));
  const search = json.measurements.filter((row) => row.scenario.startsWith('search'));
  if (search.length > 0) {
    lines.push(
      '## Search',
      '',
      `With ${settings.connections} connections the server is saturated (capacity; latency is only queueing); with ${settings.searchConnections} clients searching at once, latency is the search's own. ${WAL_NOTE}`,
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
  lines.push(...scaleSection(json.scale, (rows) => measurementTable(rows, undefined)));
  return lines.join('\n');
}

/**
 * A default run's results with the search at scale of the last results in `dir`: that part is a
 * run of its own (`BENCH_ONLY=scale`: ten million users take long to write), and keeps its date.
 */
export function withLastScale(json: BenchResults, dir: string): BenchResults {
  const file = path.join(dir, 'results.json');
  if (json.scale || !existsSync(file)) return json;
  const { scale } = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
  return scale ? { ...json, scale } : json;
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
