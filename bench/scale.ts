/**
 * Search at scale (`BENCH_ONLY=scale`, never in the default run): the service's search with
 * BENCH_SCALE_USERS users (default 10,000,000) in PostgreSQL, 8 clients searching at once, and the
 * plans PostgreSQL chose. Its results join those of the last run in bench/results.json.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { type Measurement, measureRounds, type Scenario } from './harness.js';
import { explainSearch, growUsers, SEARCH_QUERIES } from './search.js';
import { WAL_NOTE, type WalProbe } from './wal.js';

/** The clients searching at once, as in the search part of the default run. */
export const SCALE_CONNECTIONS = 8;

export interface ScaleResults {
  measuredAt: string;
  users: number;
  connections: number;
  seconds: number;
  runs: number;
  measurements: Measurement[];
  /** EXPLAIN ANALYZE of each query at this size. */
  plans: Record<string, string>;
}

export async function measureScale(options: {
  db: Kysely<Database>;
  base: string;
  pid: number | undefined;
  users: number;
  settings: { seconds: number; warmupSeconds: number; runs: number };
  wal?: WalProbe | undefined;
}): Promise<ScaleResults> {
  const { db, users } = options;
  const started = Date.now();
  console.log(`growing to ${users.toLocaleString('en')} users…`);
  await growUsers(db, 0, users);
  console.log(`grown in ${Math.round((Date.now() - started) / 1000)} s`);
  const plans: Record<string, string> = {};
  const scenarios: Scenario[] = [];
  for (const query of SEARCH_QUERIES) {
    plans[`${query.name} at ${users}`] = await explainSearch(db, query.q);
    scenarios.push({
      name: `search, ${query.name} ("${query.q}"), ${users.toLocaleString('en')} users, ${SCALE_CONNECTIONS} clients`,
      target: 'idp',
      url: `${options.base}/api/users/search?q=${encodeURIComponent(query.q)}`,
      options: { connections: SCALE_CONNECTIONS },
      pid: options.pid,
    });
  }
  const measurements = await measureRounds(scenarios, options.settings, undefined, options.wal);
  return {
    measuredAt: new Date().toISOString(),
    users,
    connections: SCALE_CONNECTIONS,
    seconds: options.settings.seconds,
    runs: options.settings.runs,
    measurements,
    plans,
  };
}

/** The targets: each query's p99 under 50 ms. */
export function judgeScale(scale: ScaleResults | undefined) {
  if (!scale) return [];
  return scale.measurements.map((row) => {
    const query = SEARCH_QUERIES.find((each) => row.scenario.includes(`("${each.q}")`));
    return {
      target: `search p99 < 50 ms at ${scale.users.toLocaleString('en')} users, ${scale.connections} clients (${query?.name ?? row.scenario})`,
      measured: `${row.p99Ms} ms (p50 ${row.p50Ms} ms, ${row.requestsPerSecond}/s)`,
      pass: row.p99Ms < 50 && row.non2xx === 0,
    };
  });
}

/** The "Search at scale" section of bench/results.md. */
export function scaleSection(
  scale: ScaleResults | undefined,
  table: (rows: Measurement[]) => string[],
): string[] {
  if (!scale) return [];
  return [
    '## Search at scale',
    '',
    `Measured ${scale.measuredAt} (\`BENCH_ONLY=scale\`): ${scale.users.toLocaleString('en')} users, ${scale.connections} clients searching at once, ${scale.runs} round(s) of ${scale.seconds} s. ${WAL_NOTE}`,
    '',
    ...table(scale.measurements),
    '',
    ...Object.entries(scale.plans).flatMap(([name, plan]) => [`### ${name}`, '', '```', plan, '```', '']),
  ];
}
