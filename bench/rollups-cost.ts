/**
 * What the console's per-minute rollups cost userinfo and the token endpoint (its budget: at most 5%
 * more CPU per request). `npx tsx bench/rollups-cost.ts`
 *
 * Two servers of the same build on one PostgreSQL database, pinned to one core: the service as it
 * runs, and the same with the recorder's counting methods replaced by no-ops
 * (bench/rollups-off-server.mjs). Each round loads both with a scenario, one after the other (the
 * order swapped every round), and compares their CPU time per request in that round, so that a
 * machine busy for a while slows both sides of a ratio; the verdict is the median of the rounds'
 * ratios. Beside it, the hooks' own cost in this process
 * (ns per call), which a noisy machine cannot blur: it is what the difference can be at most.
 *
 * ROLLUPS_BENCH_SECONDS (default 5), ROLLUPS_BENCH_RUNS (7), DATABASE_URL (the machine's PostgreSQL).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
// @ts-expect-error bin/ is plain JavaScript without declarations
import { buildIsCurrent } from '../bin/launch.js';
import { loadConfig } from '../src/config.js';
import { openPostgres } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { RollupRecorder } from '../src/modules/rollups/rollup-recorder.js';
import {
  type Measurement,
  measureRounds,
  median,
  pinLoadGenerator,
  type Scenario,
  startPinned,
  stop,
  waitForPort,
} from './harness.js';
import { basicOf, bearerRequests, formPosts } from './scenarios.js';
import { seedRefreshTokens, seedService } from './seed.js';
import { build, serviceEnv, settle, startService } from './service.js';

const SECONDS = Number(process.env.ROLLUPS_BENCH_SECONDS ?? 5);
const RUNS = Number(process.env.ROLLUPS_BENCH_RUNS ?? 7);
const WARMUP = 2;
const BASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PORT = Number(process.env.BENCH_PORT ?? 3950);
/** Refresh tokens each server may use: its rate at most, for every second it is loaded. */
const REFRESHES_PER_SERVER = 3000 * (WARMUP + SECONDS * RUNS + 1);
/** At most this much more CPU per request with the rollups: the console's budget. */
const LIMIT = 1.05;

/** ns per call of `hook`, over enough calls to take about half a second. */
function nsPerCall(hook: (i: number) => void): number {
  for (let i = 0; i < 100_000; i++) hook(i); // warm up the JIT
  const calls = 5_000_000;
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) hook(i);
  return Number(process.hrtime.bigint() - start) / calls;
}

async function main(): Promise<void> {
  pinLoadGenerator();
  const recorder = new RollupRecorder();
  const hooks = {
    // Every request: the response hook with a 2xx status.
    response: nsPerCall(() => recorder.response('/api/v1/oauth/userinfo', 200)),
    // Each token set: the total, the client's series and the refresh count.
    tokens: nsPerCall(() => recorder.tokens('cl_bench', 'refresh_token')),
  };
  console.log(JSON.stringify({ hooksNsPerCall: hooks }));

  const name = `idp_rollups_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const database = openPostgres({ url: databaseUrl, poolMax: 4 });
  const children: ReturnType<typeof startService>[] = [];
  try {
    // The build both servers run: made now unless dist/ is a build of the sources as they are.
    if (!buildIsCurrent('main')) build();
    await migrateToLatest(database.db);
    const config = loadConfig({ DATABASE_URL: databaseUrl, PUBLIC_URL: `http://127.0.0.1:${PORT}` });
    const seeded = await seedService(
      database.db,
      { config, clock: systemClock },
      {
        tokensPerUser: 5,
        dpopJkt: 'unused',
        users: 32,
      },
    );
    const refreshTokens = await seedRefreshTokens(database.db, seeded, 2 * REFRESHES_PER_SERVER);
    const servers = [
      { label: 'with rollups', port: PORT },
      { label: 'without rollups', port: PORT + 1 },
    ].map((server, index) => {
      const env = serviceEnv(server.port, { DATABASE_URL: databaseUrl });
      const child =
        index === 0
          ? startService(env)
          : startPinned(process.execPath, [path.join('bench', 'rollups-off-server.mjs')], env);
      children.push(child);
      return { ...server, child, base: `http://127.0.0.1:${server.port}` };
    });
    for (const server of servers) await waitForPort(`${server.base}/health/live`, server.child);
    await settle(database.db);

    const basic = basicOf(seeded.client.clientId, seeded.client.clientSecret);
    const scenarios = servers.flatMap((server, index) => {
      const mine = refreshTokens.slice(index * REFRESHES_PER_SERVER, (index + 1) * REFRESHES_PER_SERVER);
      return [
        {
          name: `userinfo, ${server.label}`,
          target: 'idp' as const,
          url: `${server.base}/api/v1/oauth/userinfo`,
          options: bearerRequests(seeded.accessTokens),
          pid: server.child.pid,
        },
        {
          name: `token endpoint (refresh_token), ${server.label}`,
          target: 'idp' as const,
          url: `${server.base}/api/v1/oauth/token`,
          options: formPosts(basic, mine, (token) => `grant_type=refresh_token&refresh_token=${token}`),
          pid: server.child.pid,
        },
      ];
    });
    // Warmed up once; then each round loads both servers with each scenario, the order swapped
    // every round, and keeps the ratio of their CPU per request in that round.
    await measureRounds(scenarios, { seconds: WARMUP, warmupSeconds: 0, runs: 1 });
    const kinds = [0, 1].map((i) => ({ on: scenarios[i] as Scenario, off: scenarios[i + 2] as Scenario }));
    const rounds = kinds.map(() => [] as Array<{ on: Measurement; off: Measurement }>);
    for (let round = 0; round < RUNS; round++) {
      for (const [i, { on, off }] of kinds.entries()) {
        const pair = round % 2 === 0 ? [on, off] : [off, on];
        const [first, second] = await measureRounds(pair, { seconds: SECONDS, warmupSeconds: 0, runs: 1 });
        const [a, b] = round % 2 === 0 ? [first, second] : [second, first];
        rounds[i]?.push({ on: a as Measurement, off: b as Measurement });
      }
    }
    const verdicts = kinds.map((kind, i) => {
      const runs = rounds[i] ?? [];
      const cpu = (side: 'on' | 'off') =>
        median(runs.map((run) => run[side].cpuMicrosPerRequest ?? Number.NaN));
      const ratios = runs.map(
        (run) => (run.on.cpuMicrosPerRequest ?? Number.NaN) / (run.off.cpuMicrosPerRequest ?? Number.NaN),
      );
      const ratio = median(ratios);
      const non2xx = runs.reduce((sum, run) => sum + run.on.non2xx + run.off.non2xx, 0);
      const hookNs = i === 0 ? hooks.response : hooks.response + hooks.tokens;
      return {
        scenario: kind.on.name.replace(', with rollups', ''),
        cpuMicrosPerRequest: { with: cpu('on'), without: cpu('off') },
        roundRatios: ratios.map((each) => Math.round(each * 1000) / 1000),
        ratio: Math.round(ratio * 1000) / 1000,
        hooksShare: `${((hookNs / 1000 / cpu('on')) * 100).toFixed(3)}%`,
        non2xx,
        pass: ratio <= LIMIT && non2xx === 0,
      };
    });
    console.log(JSON.stringify({ limit: LIMIT, verdicts }, null, 2));
    if (verdicts.some((verdict) => !verdict.pass)) process.exitCode = 1;
  } finally {
    for (const child of children) await stop(child);
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
