/**
 * `npm run bench`: measures the service the way its users load it, against baselines measured in
 * the same run on the same machine (absolute numbers drift between machines; ratios do not):
 * a bare Fastify route (the ceiling) and oidc-provider, the OpenID-certified Node.js provider
 * (bench/oidc-provider-server.mjs).
 *
 * Servers run as their own processes, pinned to core 0 when `taskset` exists; this process and
 * autocannon run on core 1. The service runs from the compiled build, as the Docker image does, on
 * PostgreSQL (DATABASE_URL, default the machine's), and then on PGlite for userinfo and charges.
 * Results: bench/results.md (tables, with the targets) and bench/results.json.
 *
 * BENCH_SECONDS (default 10) and BENCH_WARMUP_SECONDS (default 3) set the length of each run;
 * BENCH_RUNS (default 3) how many interleaved rounds each scenario gets (the median is reported).
 * BENCH_SEARCH_SIZES=100000,1000000: the user counts the search is measured at.
 * BENCH_SUSTAINED_SECONDS (default 600) and BENCH_SUSTAINED_INTERVAL_SECONDS (default 60): the
 * sustained charges (bench/sustained.ts), over BENCH_SUSTAINED_USERS wallets (default 3000), with
 * the ledger first filled in bulk so that the run takes it past 1,000,000 entries
 * (BENCH_SUSTAINED_PREFILL=<entries> sets how many are written in bulk instead).
 * BENCH_ONLY=<part>: only the parts whose name contains it (startup, compare, device, flow, signin,
 * wallet, sustained, search, pglite); `BENCH_ONLY=startup` alone keeps the other results of
 * bench/results.json and replaces its start-up section. BENCH_STARTUP_RUNS (default 7) sets how
 * many times each start-up scenario runs (bench/startup.ts).
 * BENCH_ONLY=scale (and only it; never in the default run): search at BENCH_SCALE_USERS users
 * (default 10,000,000; bench/scale.ts), merged into bench/results.json like `BENCH_ONLY=startup`;
 * a default run keeps the last one.
 * BENCH_DEVICE_CODES (default 100,000; 20,000 in the smoke run): the devices waiting at once in
 * the device_code poll scenario (bench/device.ts), each polling no sooner than its 5-second interval
 * as long as the service answers fewer than a fifth of that many polls a second (every code is
 * polled once first, and the runs start an interval later).
 * BENCH_PROFILE=1: a V8 CPU profile of the service in bench/profiles/.
 * BENCH_PORT (default 3900): the first of the four ports the servers listen on.
 * WAL per request (PostgreSQL's pg_stat_wal and insert position, cluster-wide) is measured around
 * each run of the service on PostgreSQL (bench/wal.ts).
 * BENCH_USERS (default 200): the users seeded through the service, each with an argon2id hash,
 * tokens and a wallet, on PostgreSQL and again on PGlite.
 * BENCH_SMOKE=1 (`npm run bench:smoke`, in CI): every scenario for a second, small search sizes,
 * 3 s of sustained charges in 1 s intervals over 500 wallets with 1,000 entries written in bulk,
 * 32 seeded users (the 200 took some 90 of the smoke run's 220 s on a busy machine, most on PGlite),
 * results in a temporary folder, no targets judged — so that the benchmark cannot rot.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import type { Context } from '../src/context.js';
import { openPglite, openPostgres } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { projectRoot } from '../src/lib/paths.js';
import { verifyLedger } from '../src/modules/wallet/wallet.service.js';
import type { CookieJar } from '../test/helpers/cookie-jar.js';
import { compareScenarios } from './compare.js';
import { deviceScenario } from './device.js';
import { authorizeFlow, closedLoop, type LoopResult, percentile, signIn } from './flows.js';
import {
  hasTaskset,
  measureRounds,
  median,
  pinLoadGenerator,
  rssMb,
  type Scenario,
  startPinned,
  stop,
  waitForListening,
  waitForPort,
} from './harness.js';
import { type BenchResults, type FlowMeasurement, withLastScale, writeResults } from './report.js';
import { measureScale } from './scale.js';
import { bearerRequests, dpop, walletScenarios } from './scenarios.js';
import { explainSearch, growUsers, SEARCH_QUERIES } from './search.js';
import { PASSWORD, REDIRECT_URI, seedCodes, seedRefreshTokens, seedService, USERS } from './seed.js';
import { build, rsaSignsPerSecond, serviceEnv, settle, startService } from './service.js';
import { measureStartup } from './startup.js';
import { measureSustained } from './sustained.js';
import { walProbe } from './wal.js';

const SMOKE = process.env.BENCH_SMOKE === '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? (SMOKE ? 1 : 10));
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? (SMOKE ? 0 : 3));
const RUNS = Number(process.env.BENCH_RUNS ?? (SMOKE ? 1 : 3));
const SEARCH_SIZES = (process.env.BENCH_SEARCH_SIZES ?? (SMOKE ? '2000' : '100000,1000000'))
  .split(',')
  .map(Number);
const SUSTAINED = {
  seconds: Number(process.env.BENCH_SUSTAINED_SECONDS ?? (SMOKE ? 3 : 600)),
  intervalSeconds: Number(process.env.BENCH_SUSTAINED_INTERVAL_SECONDS ?? (SMOKE ? 1 : 60)),
  users: Number(process.env.BENCH_SUSTAINED_USERS ?? (SMOKE ? 500 : 3000)),
  prefill: process.env.BENCH_SUSTAINED_PREFILL
    ? Number(process.env.BENCH_SUSTAINED_PREFILL)
    : SMOKE
      ? 1000
      : undefined,
};
/** Enough for the closed loops' workers (FLOW_WORKERS signed in at once). */
const SEEDED_USERS = Number(process.env.BENCH_USERS ?? (SMOKE ? 32 : USERS));
const SCALE_USERS = Number(process.env.BENCH_SCALE_USERS ?? 10_000_000);
const ONLY = process.env.BENCH_ONLY;
const runs = (part: string) => !ONLY || part.includes(ONLY);
/** The parts of the default run (start-up aside, which may run alone). */
const PARTS = ['compare', 'device', 'flow', 'signin', 'wallet', 'sustained', 'search', 'pglite'];
const DEVICE_CODES = Number(process.env.BENCH_DEVICE_CODES ?? (SMOKE ? 20_000 : 100_000));
const STARTUP_RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? (SMOKE ? 1 : 7));
const settings = { seconds: SECONDS, warmupSeconds: WARMUP, runs: RUNS };
/**
 * The load at which search latency is judged: this many clients searching at once, each sending
 * its next search as soon as the previous one is answered. With 32 connections the server is
 * saturated and the median is only queueing (connections ÷ throughput), which says nothing about
 * the search.
 */
const SEARCH_CONNECTIONS = 8;
/** Workers of the closed-loop scenarios: browsers going through the flow, and signing in. */
const FLOW_WORKERS = 16;
const SIGNIN_WORKERS = 8;
const BASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const OUT_DIR = SMOKE
  ? mkdtempSync(path.join(os.tmpdir(), 'idp-bench-smoke-'))
  : path.join(projectRoot, 'bench');
/** Values used once (codes, refresh tokens) a scenario may need: its rate at most, for every second. */
const ONCE_PER_SECOND = 5000;
const onceNeeded = ONCE_PER_SECOND * (WARMUP + SECONDS * RUNS + 1);

/** BENCH_PORT (default 3900): the first of the four ports the servers listen on. */
const PORT = Number(process.env.BENCH_PORT ?? 3900);
const PORTS = { idp: PORT, ceiling: PORT + 1, oidcProvider: PORT + 2, pglite: PORT + 3 };

/** A closed loop, `RUNS` times after a warm-up; the median run. */
async function measureLoop(
  scenario: string,
  workers: number,
  flow: (worker: number) => Promise<void>,
): Promise<FlowMeasurement> {
  if (WARMUP > 0) await closedLoop(WARMUP, workers, flow);
  const loops: LoopResult[] = [];
  for (let run = 0; run < RUNS; run++) loops.push(await closedLoop(SECONDS, workers, flow));
  const perSecond = loops.map((loop) => loop.completed / loop.seconds);
  const middle = loops[perSecond.indexOf(median(perSecond))] as LoopResult;
  const firstFailure = loops.find((loop) => loop.firstFailure)?.firstFailure;
  const measurement: FlowMeasurement = {
    scenario,
    workers,
    perSecond: Math.round(median(perSecond) * 10) / 10,
    p50Ms: percentile(middle.latencies, 50),
    p99Ms: percentile(middle.latencies, 99),
    failures: loops.reduce((sum, loop) => sum + loop.failures, 0),
    runs: perSecond.map((value) => Math.round(value * 10) / 10),
    ...(firstFailure ? { firstFailure } : {}),
  };
  console.log(JSON.stringify(measurement));
  return measurement;
}

/** A database of its own on the bench's PostgreSQL, dropped by `drop()`. */
async function createDatabase() {
  const name = `idp_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  return {
    admin,
    url: url.toString(),
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Merges `part` into the last run's bench/results.json (or prints it when there is none). */
function mergeIntoResults(part: Partial<BenchResults>): void {
  const file = path.join(OUT_DIR, 'results.json');
  if (!existsSync(file)) {
    console.log(JSON.stringify(part, null, 2));
    return;
  }
  writeResults({ ...(JSON.parse(readFileSync(file, 'utf8')) as BenchResults), ...part }, OUT_DIR);
  console.log(`results: ${path.join(OUT_DIR, 'results.md')}`);
}

/** `BENCH_ONLY=startup`: the start-up scenarios alone, merged into the last run's results. */
async function startupOnly(): Promise<void> {
  build();
  const loadBefore = os.loadavg()[0] as number;
  const startup = await measureStartup(STARTUP_RUNS, BASE_URL);
  const startupLoadAverage: [number, number] = [loadBefore, os.loadavg()[0] as number];
  mergeIntoResults({ startup, startupLoadAverage, startupMeasuredAt: new Date().toISOString() });
}

/** `BENCH_ONLY=scale`: search at BENCH_SCALE_USERS users, merged into the last run's results. */
async function scaleOnly(): Promise<void> {
  build();
  const database = await createDatabase();
  const { db, close } = openPostgres({ url: database.url, poolMax: 4 });
  let idp: ChildProcess | undefined;
  try {
    await migrateToLatest(db);
    idp = startService(serviceEnv(PORTS.idp, { DATABASE_URL: database.url }));
    const base = `http://127.0.0.1:${PORTS.idp}`;
    await waitForPort(`${base}/health/live`, idp);
    const scale = await measureScale({
      db,
      base,
      pid: idp.pid,
      users: SCALE_USERS,
      settings,
      wal: walProbe(database.admin),
    });
    mergeIntoResults({ scale });
  } finally {
    if (idp) await stop(idp);
    await close();
    await database.drop();
  }
}

async function main(): Promise<void> {
  pinLoadGenerator();
  if (ONLY === 'scale') return scaleOnly();
  if (ONLY && runs('startup') && !PARTS.some(runs)) return startupOnly();
  const bench = await createDatabase();
  const databaseUrl = bench.url;
  const wal = walProbe(bench.admin);
  const children: ChildProcess[] = [];
  const database = openPostgres({ url: databaseUrl, poolMax: 4 });
  const pgliteDir = mkdtempSync(path.join(os.tmpdir(), 'idp-bench-pglite-'));
  const results: BenchResults = {
    measuredAt: new Date().toISOString(),
    smoke: SMOKE,
    machine: {
      cores: os.cpus().length,
      node: process.version,
      pinned: hasTaskset,
      rsa2048SignsPerSecond: rsaSignsPerSecond(SMOKE ? 1 : 3),
    },
    settings: {
      ...settings,
      connections: 32,
      searchConnections: SEARCH_CONNECTIONS,
      searchSizes: SEARCH_SIZES,
    },
    measurements: [],
    flows: [],
    searchPlans: {},
    ledgerChecks: {},
    memory: null,
  };
  try {
    build();
    // First, while no other server runs: start-up is measured on a machine doing nothing else.
    if (runs('startup')) {
      const loadBefore = os.loadavg()[0] as number;
      results.startup = await measureStartup(STARTUP_RUNS, BASE_URL);
      results.startupLoadAverage = [loadBefore, os.loadavg()[0] as number];
    }
    await migrateToLatest(database.db);
    const config = loadConfig({ DATABASE_URL: databaseUrl, PUBLIC_URL: `http://127.0.0.1:${PORTS.idp}` });
    const ctx: Context = { config, clock: systemClock };
    console.log('seeding…');
    const seeded = await seedService(database.db, ctx, {
      tokensPerUser: 5,
      dpopJkt: dpop.jkt,
      users: SEEDED_USERS,
    });
    const codes = runs('compare') ? await seedCodes(database.db, seeded, onceNeeded) : [];
    const es256Codes = runs('compare')
      ? await seedCodes(database.db, seeded, onceNeeded, seeded.es256Client)
      : [];
    const refreshTokens = runs('compare') ? await seedRefreshTokens(database.db, seeded, onceNeeded) : [];

    // The servers: ours from the compiled build (made above), the ceiling, oidc-provider.
    mkdirSync(path.join(projectRoot, 'bench', 'profiles'), { recursive: true });
    const idp = startService(serviceEnv(PORTS.idp, { DATABASE_URL: databaseUrl }));
    children.push(idp);
    const idpBase = `http://127.0.0.1:${PORTS.idp}`;
    // The service logs at warn, so wait on the port instead of the listening line.
    await waitForPort(`${idpBase}/health/live`, idp);
    const ceiling = startPinned(process.execPath, [path.join('bench', 'ceiling-server.mjs')], {
      ...process.env,
      PORT: String(PORTS.ceiling),
    });
    children.push(ceiling);
    const ceilingBase = await waitForListening(ceiling);
    const provider = startPinned(process.execPath, [path.join('bench', 'oidc-provider-server.mjs')], {
      ...process.env,
      PORT: String(PORTS.oidcProvider),
    });
    children.push(provider);
    const providerBase = await waitForListening(provider);

    // Resident memory of the service: once idle, then the highest seen while it is under load.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const idleRssMb = rssMb(idp.pid);
    let peakRssMb = idleRssMb;
    const sample = () => {
      peakRssMb = Math.max(peakRssMb, rssMb(idp.pid));
    };

    await settle(database.db);
    if (runs('compare')) {
      const servers = {
        ceiling: { base: ceilingBase, pid: ceiling.pid },
        idp: { base: idpBase, pid: idp.pid },
        provider: { base: providerBase, pid: provider.pid },
      };
      const scenarios = await compareScenarios(
        servers,
        seeded,
        { codes, es256Codes, refreshTokens },
        onceNeeded,
      );
      results.measurements.push(...(await measureRounds(scenarios, settings, sample, wal)));
    }
    // oidc-provider holds some 400 MB of minted tokens: it goes before the service's own scenarios.
    await stop(provider);

    await settle(database.db);
    if (runs('device')) {
      // Seeded now: a device's request lives 10 minutes.
      const polls = await deviceScenario(database.db, ctx, { base: idpBase, pid: idp.pid }, DEVICE_CODES);
      results.measurements.push(...(await measureRounds([polls], settings, sample, wal)));
      await settle(database.db);
    }
    if (runs('flow')) {
      const jars = await Promise.all(
        Array.from({ length: FLOW_WORKERS }, (_, i) =>
          signIn(idpBase, seeded.users[i]?.username as string, PASSWORD),
        ),
      );
      const client = {
        clientId: seeded.client.clientId,
        clientSecret: seeded.client.clientSecret,
        redirectUri: REDIRECT_URI,
      };
      results.flows.push(
        await measureLoop(
          'authorize → consent → token → userinfo (browserless, signed-in users)',
          FLOW_WORKERS,
          (worker) => authorizeFlow(idpBase, jars[worker] as CookieJar, client),
        ),
      );
      sample();
    }
    await settle(database.db);
    if (runs('signin')) {
      let next = 0;
      results.flows.push(
        await measureLoop(
          'password sign-in (sign-in page, then its form; argon2id)',
          SIGNIN_WORKERS,
          async () => {
            const user = seeded.users[next++ % seeded.users.length];
            await signIn(idpBase, user?.username as string, PASSWORD);
          },
        ),
      );
      sample();
    }
    await settle(database.db);
    if (runs('wallet')) {
      const wallet = walletScenarios('idp', idpBase, idp.pid, seeded);
      results.measurements.push(...(await measureRounds(wallet, settings, sample, wal)));
      results.ledgerChecks.postgres = await verifyLedger(database.db);
      console.log(`ledger check after the charges: ${JSON.stringify(results.ledgerChecks.postgres)}`);
    }
    if (runs('sustained')) {
      const spread = results.measurements.find((row) => row.scenario.startsWith('wallet charges over'));
      results.sustained = await measureSustained({
        db: database.db,
        shop: seeded.shop,
        base: idpBase,
        pid: idp.pid,
        wal,
        users: SUSTAINED.users,
        seconds: SUSTAINED.seconds,
        intervalSeconds: SUSTAINED.intervalSeconds,
        connections: 32,
        prefill: SUSTAINED.prefill,
        expectedRate: spread?.requestsPerSecond ?? 1500,
        onInterval: sample,
      });
      await settle(database.db);
    }
    results.memory = { idleRssMb, peakRssMb };

    // Search at 100k and then 1M users, with the plans PostgreSQL chose.
    if (runs('search')) {
      let grown = seeded.users.length;
      for (const size of SEARCH_SIZES) {
        console.log(`growing to ${size} users…`);
        await growUsers(database.db, grown, size);
        grown = size;
        const scenarios: Scenario[] = [];
        for (const query of SEARCH_QUERIES) {
          results.searchPlans[`${query.name} at ${size}`] = await explainSearch(database.db, query.q);
          const scenario = `search, ${query.name} ("${query.q}"), ${size.toLocaleString('en')} users`;
          const searchUrl = `${idpBase}/api/users/search?q=${encodeURIComponent(query.q)}`;
          scenarios.push({ name: scenario, target: 'idp', url: searchUrl, options: {}, pid: idp.pid });
          scenarios.push({
            name: `${scenario}, ${SEARCH_CONNECTIONS} clients`,
            target: 'idp',
            url: searchUrl,
            options: { connections: SEARCH_CONNECTIONS },
            pid: idp.pid,
          });
        }
        results.measurements.push(...(await measureRounds(scenarios, settings, undefined, wal)));
      }
    }
    await stop(idp);

    // The embedded default: userinfo and charges on PGlite, seeded before the server owns the files.
    if (runs('pglite')) {
      console.log('seeding PGlite…');
      const embedded = await openPglite(pgliteDir);
      await migrateToLatest(embedded.db);
      const pgliteSeeded = await seedService(
        embedded.db,
        {
          config: loadConfig({ DATA_DIR: pgliteDir, PUBLIC_URL: `http://127.0.0.1:${PORTS.pglite}` }),
          clock: systemClock,
        },
        { tokensPerUser: 5, dpopJkt: dpop.jkt, users: SEEDED_USERS },
      );
      await embedded.close();
      const server = startService(serviceEnv(PORTS.pglite, { DATA_DIR: pgliteDir }));
      children.push(server);
      const base = `http://127.0.0.1:${PORTS.pglite}`;
      await waitForPort(`${base}/health/live`, server);
      results.measurements.push(
        ...(await measureRounds(
          [
            {
              name: `userinfo (${pgliteSeeded.accessTokens.length} distinct tokens)`,
              target: 'idp (PGlite)',
              url: `${base}/api/v1/oauth/userinfo`,
              options: bearerRequests(pgliteSeeded.accessTokens),
              pid: server.pid,
            },
            ...walletScenarios('idp (PGlite)', base, server.pid, pgliteSeeded),
          ],
          settings,
        )),
      );
      await stop(server);
      const reopened = await openPglite(pgliteDir);
      results.ledgerChecks.pglite = await verifyLedger(reopened.db);
      await reopened.close();
    }
    writeResults(withLastScale(results, OUT_DIR), OUT_DIR);
    console.log(`results: ${path.join(OUT_DIR, 'results.md')}`);
    // The smoke run (CI) fails when any scenario stopped working, whatever its speed.
    const sustainedFailed = (results.sustained?.intervals ?? []).reduce((sum, each) => sum + each.failed, 0);
    const failed =
      results.measurements.reduce((sum, row) => sum + row.non2xx, 0) +
      results.flows.reduce((sum, flow) => sum + flow.failures, 0) +
      sustainedFailed;
    const ledgerBroken =
      Object.values(results.ledgerChecks).some((check) => !check.ok) ||
      results.sustained?.ledgerCheck?.ok === false;
    if (failed > 0 || ledgerBroken) {
      console.error(
        `${failed} failed requests or flows${ledgerBroken ? ', and the ledger check failed' : ''}`,
      );
      if (SMOKE) process.exitCode = 1;
    }
  } finally {
    for (const child of children) await stop(child);
    await database.close();
    await bench.drop();
    rmSync(pgliteDir, { recursive: true, force: true });
  }
}

await main();
