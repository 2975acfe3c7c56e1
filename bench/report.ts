/**
 * Renders `bench/results.md` from the measurements of a run (`bench/results.json`).
 * `npm run bench:report` renders it again from the file alone.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/lib/paths.js';
import type { LedgerCheck } from '../src/modules/wallet/wallet.service.js';
import { SEARCH_QUERIES } from './search.js';

export interface Measurement {
  scenario: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  runs: number[];
}

export interface ResultRow extends Measurement {
  ofCeiling: number | null;
  oidcProviderScaled: number | null;
  vsOidcProvider: number | null;
  meetsTarget: boolean | null;
}

export interface BenchResults {
  measuredAt: string;
  machine: { cores: number; node: string; pinned: boolean };
  settings: {
    seconds: number;
    warmupSeconds: number;
    runs: number;
    connections: number;
    searchConnections: number;
    searchSizes: number[];
    oidcProviderReference: { userinfo: number; codeExchange: number; refresh?: number; ceiling: number };
  };
  results: ResultRow[];
  searchPlans: Record<string, string>;
  ledgerCheck: LedgerCheck | null;
  /** Resident memory of the server (MiB): idle after start, and the highest seen under load. */
  memory?: { idleRssMb: number; peakRssMb: number };
}

export function writeMarkdown(json: BenchResults): void {
  const { settings } = json;
  const reference = settings.oidcProviderReference;
  const rows = json.results;
  const plans = json.searchPlans;
  const ceiling = rows.find((row) => row.scenario.includes('ceiling'))?.requestsPerSecond ?? Number.NaN;
  const scale = ceiling / reference.ceiling;
  const lines = [
    '# Benchmark results',
    '',
    `Measured ${json.measuredAt} on ${json.machine.cores} cores, Node ${json.machine.node}; server ${json.machine.pinned ? 'pinned to core 0, load generator to core 1' : 'not pinned (no taskset)'}; PostgreSQL on the same machine. ${settings.runs} runs of ${settings.seconds} s after ${settings.warmupSeconds} s of warm-up, ${settings.connections} connections; the median run is shown.`,
    '',
    '| scenario | req/s | p50 ms | p99 ms | non-2xx | of ceiling | oidc-provider (scaled) | ours / theirs | ≥ oidc-provider |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.scenario} | ${row.requestsPerSecond} | ${row.p50Ms} | ${row.p99Ms} | ${row.non2xx} | ${row.ofCeiling === null ? '–' : `${(row.ofCeiling * 100).toFixed(1)}%`} | ${row.oidcProviderScaled ?? '–'} | ${row.vsOidcProvider === null ? '–' : `${row.vsOidcProvider.toFixed(2)}×`} | ${row.meetsTarget === null ? '–' : row.meetsTarget ? 'pass' : 'fail'} |`,
    ),
    '',
    `oidc-provider is not re-measured by this run: its figures (userinfo ${reference.userinfo}/s, code exchange ${reference.codeExchange}/s${reference.refresh ? `, refresh ${reference.refresh}/s` : ''}, next to a bare Fastify route at ${reference.ceiling}/s, oidc-provider 9 with its in-memory store, same pinning) are scaled by this run's ceiling (×${scale.toFixed(2)}).`,
    '',
  ];
  if (json.memory) {
    lines.push(
      '## Memory',
      '',
      `Resident set size of the server: ${json.memory.idleRssMb} MiB idle after start, at most ${json.memory.peakRssMb} MiB under the load of this run.`,
      '',
    );
  }
  const walletRows = rows.filter((row) => row.scenario.startsWith('wallet charges'));
  if (walletRows.length > 0) {
    const target = (row: Measurement) => (row.scenario.includes('hot wallet') ? 300 : 1500);
    lines.push(
      '## Wallet',
      '',
      'Targets: at least 1,500 charges/s spread over many users and 300/s on one hot wallet, with no error, and the ledger invariant (`idp wallet verify`) passing afterwards.',
      '',
      '| scenario | charges/s | p50 ms | p99 ms | non-2xx | target | meets it |',
      '|---|---|---|---|---|---|---|',
      ...walletRows.map(
        (row) =>
          `| ${row.scenario} | ${row.requestsPerSecond} | ${row.p50Ms} | ${row.p99Ms} | ${row.non2xx} | ${target(row)}/s | ${row.requestsPerSecond >= target(row) && row.non2xx === 0 ? 'pass' : 'fail'} |`,
      ),
      '',
      json.ledgerCheck
        ? `Ledger check after the charges: ${json.ledgerCheck.ok ? 'pass' : 'FAIL'} (${json.ledgerCheck.wallets_checked} wallets, ${json.ledgerCheck.mismatches.length} mismatches).`
        : 'Ledger check: not run.',
      '',
    );
  }
  const searchRows = rows.filter(
    (row) => row.scenario.startsWith('search') && !row.scenario.endsWith(' clients'),
  );
  if (searchRows.length > 0) {
    const atRate = (row: Measurement) =>
      rows.find((other) => other.scenario === `${row.scenario}, ${settings.searchConnections} clients`);
    const medianAt = (query: string, size: number) =>
      atRate(
        searchRows.find(
          (row) =>
            row.scenario.includes(`("${query}")`) &&
            row.scenario.endsWith(`${size.toLocaleString('en')} users`),
        ) as Measurement,
      )?.p50Ms;
    lines.push(
      '## Search',
      '',
      `Targets: median under 10 ms and p99 under 50 ms with ${settings.searchConnections} clients searching at once; the median at 1M within 2× of the median at 100k. Capacity is the throughput with ${settings.connections} connections, where the server is saturated and latency is only queueing.`,
      '',
      `| query | users | capacity req/s | req/s, ${settings.searchConnections} clients | p50 ms | p99 ms | non-2xx | p50 < 10 ms | p99 < 50 ms |`,
      '|---|---|---|---|---|---|---|---|---|',
      ...searchRows.map((row) => {
        const match = /search, (.+), ([\d,]+) users/.exec(row.scenario);
        const rated = atRate(row);
        const verdict = (ok: boolean | undefined) => (ok === undefined ? '–' : ok ? 'pass' : 'fail');
        return `| ${match?.[1] ?? row.scenario} | ${match?.[2] ?? ''} | ${row.requestsPerSecond} | ${rated?.requestsPerSecond ?? '–'} | ${rated?.p50Ms ?? '–'} | ${rated?.p99Ms ?? '–'} | ${row.non2xx + (rated?.non2xx ?? 0)} | ${verdict(rated && rated.p50Ms < 10)} | ${verdict(rated && rated.p99Ms < 50)} |`;
      }),
      '',
      ...(settings.searchSizes.length >= 2
        ? [
            `Median at ${settings.searchSizes.at(-1)?.toLocaleString('en')} users against ${settings.searchSizes[0]?.toLocaleString('en')} (target ≤ 2×): ${SEARCH_QUERIES.map(
              (query) => {
                const small = medianAt(query.q, settings.searchSizes[0] as number);
                const large = medianAt(query.q, settings.searchSizes.at(-1) as number);
                if (small === undefined || large === undefined) return `${query.name} –`;
                // autocannon reports whole milliseconds; a 0 ms median counts as 1 ms.
                const ratio = large / Math.max(small, 1);
                return `${query.name} ${ratio.toFixed(2)}× ${ratio <= 2 ? 'pass' : 'fail'}`;
              },
            ).join(', ')}.`,
            '',
          ]
        : []),
      'Plans of the search query (EXPLAIN ANALYZE, costs and timing off):',
      '',
      ...Object.entries(plans).flatMap(([name, plan]) => [`### ${name}`, '', '```', plan, '```', '']),
    );
  }
  writeFileSync(path.join(projectRoot, 'bench', 'results.md'), lines.join('\n'));
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const file = path.join(projectRoot, 'bench', 'results.json');
  writeMarkdown(JSON.parse(readFileSync(file, 'utf8')) as BenchResults);
}
