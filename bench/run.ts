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
 * BENCH_ONLY=<part>: only the parts whose name contains it (startup, compare, flow, signin, wallet,
 * search, pglite); `BENCH_ONLY=startup` alone keeps the other results of bench/results.json and
 * replaces its start-up section. BENCH_STARTUP_RUNS (default 7) sets how many times each start-up
 * scenario runs (bench/startup.ts). BENCH_PROFILE=1: a V8 CPU profile of the service in bench/profiles/.
 * BENCH_SMOKE=1 (`npm run bench:smoke`, in CI): every scenario for a second, small search sizes,
 * results in a temporary folder, no targets judged — so that the benchmark cannot rot.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import type { Context } from '../src/context.js';
import { openPglite, openPostgres } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { projectRoot } from '../src/lib/paths.js';
import { verifyLedger } from '../src/modules/wallet/wallet.service.js';
import type { CookieJar } from '../test/helpers/cookie-jar.js';
import { dpopSigner } from './dpop.js';
import { authorizeFlow, closedLoop, type LoopResult, percentile, signIn } from './flows.js';
import {
  hasTaskset,
  type LoadOptions,
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
import { type BenchResults, type FlowMeasurement, writeResults } from './report.js';
import { explainSearch, growUsers, SEARCH_QUERIES } from './search.js';
import {
  CODE_VERIFIER,
  PASSWORD,
  REDIRECT_URI,
  type Seeded,
  seedCodes,
  seedRefreshTokens,
  seedService,
} from './seed.js';
import { measureStartup } from './startup.js';

const SMOKE = process.env.BENCH_SMOKE === '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? (SMOKE ? 1 : 10));
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? (SMOKE ? 0 : 3));
const RUNS = Number(process.env.BENCH_RUNS ?? (SMOKE ? 1 : 3));
const SEARCH_SIZES = (process.env.BENCH_SEARCH_SIZES ?? (SMOKE ? '2000' : '100000,1000000'))
  .split(',')
  .map(Number);
const ONLY = process.env.BENCH_ONLY;
const runs = (part: string) => !ONLY || part.includes(ONLY);
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

const PORTS = { idp: 3900, ceiling: 3901, oidcProvider: 3902, pglite: 3903 };
/** The services' COOKIE_SECRET: the load generator derives the DPoP nonces from it as they do. */
const COOKIE_SECRET = randomBytes(32).toString('hex');
/** The key the DPoP scenario's tokens are bound to, and its proofs. */
const dpop = dpopSigner(COOKIE_SECRET);

/** The environment of the service under load. */
function serviceEnv(
  port: number,
  database: { DATABASE_URL: string } | { DATA_DIR: string },
): NodeJS.ProcessEnv {
  // The database is the one given here only: a DATABASE_URL or DATA_DIR of this process's own
  // environment (CI sets DATABASE_URL) must not point the PGlite server at PostgreSQL.
  const { DATABASE_URL: _url, DATA_DIR: _dir, ...inherited } = process.env;
  return {
    ...inherited,
    ...database,
    IDP_RUN_BUILD: '1',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    // No line per request: oidc-provider and the ceiling log nothing either.
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    COOKIE_SECRET,
    // The limiter runs on every request, as in production, with limits a load test never reaches
    // (one load generator is one IP, and the hot-wallet scenario is one token).
    RATE_LIMIT_PUBLIC_PER_MIN: '1000000',
    RATE_LIMIT_TOKEN_PER_MIN: '1000000',
    RATE_LIMIT_BEARER_PER_MIN: '1000000',
    RATE_LIMIT_SIGNIN_PER_MIN: '1000000',
    RATE_LIMIT_FAILED_AUTH_PER_MIN: '1000000',
    SIGN_IN_MAX_ATTEMPTS: '1000',
  };
}

function startService(env: NodeJS.ProcessEnv): ChildProcess {
  // BENCH_PROFILE=1: a V8 CPU profile of the server in bench/profiles/ (open it in Chrome DevTools).
  const profileArgs = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=bench/profiles'] : [];
  return startPinned(process.execPath, [...profileArgs, 'bin/server.js'], env);
}

/**
 * Scenario helpers: a bearer GET over many distinct tokens, taken in turn by all connections (each
 * token comes back every `tokens.length` requests, as when many users' sites call at once), and a
 * form POST with a value used once.
 */
function bearerRequests(tokens: string[]): LoadOptions {
  let index = 0;
  return { next: () => ({ headers: { authorization: `Bearer ${tokens[index++ % tokens.length]}` } }) };
}
/**
 * A DPoP-bound GET (RFC 9449 §7): `Authorization: DPoP <token>` and a fresh proof for this URL and
 * token each time, as a client must send it.
 */
function dpopRequests(url: string, tokens: string[]): LoadOptions {
  let index = 0;
  return {
    next: () => {
      const token = tokens[index++ % tokens.length] as string;
      return { headers: { authorization: `DPoP ${token}`, dpop: dpop.proof('GET', url, token) } };
    },
  };
}
function formPosts(basic: string, values: string[], body: (value: string) => string): LoadOptions {
  let index = 0;
  return {
    method: 'POST',
    next: () => {
      if (index === values.length) console.warn(`ran out of single-use values after ${index} requests`);
      return {
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: body(values[index++ % values.length] as string),
      };
    },
  };
}
const basicOf = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

let chargeIndex = 0;
function charges(tokens: () => string): LoadOptions {
  return {
    method: 'POST',
    next: () => ({
      headers: { authorization: `Bearer ${tokens()}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        amount: 0.01,
        currency: 'COIN',
        description: 'bench charge',
        idempotency_key: `bench-${chargeIndex++}`,
      }),
    }),
  };
}
function walletScenarios(target: Scenario['target'], base: string, pid: number | undefined, seeded: Seeded) {
  let spread = 0;
  return [
    {
      name: `wallet charges over ${seeded.walletTokens.length} users`,
      target,
      url: `${base}/api/v1/wallet/charge`,
      options: charges(() => seeded.walletTokens[spread++ % seeded.walletTokens.length] as string),
      pid,
    },
    {
      name: 'wallet charges on one hot wallet',
      target,
      url: `${base}/api/v1/wallet/charge`,
      options: charges(() => seeded.walletTokens[0] as string),
      pid,
    },
  ];
}

async function mint(
  base: string,
  kind: string,
  count: number,
): Promise<{ values: string[]; code_verifier?: string }> {
  const response = await fetch(`${base}/bench/mint`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kind, count }),
  });
  if (!response.ok) throw new Error(`minting ${kind}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { values: string[]; code_verifier?: string };
}

/**
 * Each part starts from a database as autovacuum and the checkpointer would leave it between
 * bursts: the part before may have churned hundreds of thousands of rows (every code and refresh
 * token is used up), and their cleanup would otherwise land in the middle of the next part.
 */
async function settle(db: Parameters<typeof verifyLedger>[0]): Promise<void> {
  await sql`vacuum analyze`.execute(db);
  await sql`checkpoint`.execute(db);
}

/** RSA-2048 signatures per second on core 0 (`openssl speed`): the floor of an RS256 id_token. */
function rsaSignsPerSecond(): number | null {
  try {
    const command = hasTaskset ? ['taskset', ['-c', '0', 'openssl']] : ['openssl', []];
    const output = execFileSync(
      command[0] as string,
      [...(command[1] as string[]), 'speed', '-seconds', SMOKE ? '1' : '3', 'rsa2048'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const match = /^rsa\s+2048 bits\s+\S+\s+\S+\s+([\d.]+)/m.exec(output);
    return match?.[1] ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

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
  const measurement: FlowMeasurement = {
    scenario,
    workers,
    perSecond: Math.round(median(perSecond) * 10) / 10,
    p50Ms: percentile(middle.latencies, 50),
    p99Ms: percentile(middle.latencies, 99),
    failures: loops.reduce((sum, loop) => sum + loop.failures, 0),
    runs: perSecond.map((value) => Math.round(value * 10) / 10),
    ...(loops.find((loop) => loop.firstFailure)
      ? { firstFailure: loops.find((loop) => loop.firstFailure)?.firstFailure }
      : {}),
  };
  console.log(JSON.stringify(measurement));
  return measurement;
}

/** Compiles the service: every server of the benchmark runs the build, as the image does. */
function build(): void {
  execFileSync(path.join(projectRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {
    cwd: projectRoot,
    stdio: 'inherit',
  });
}

/** `BENCH_ONLY=startup`: the start-up scenarios alone, merged into the last run's results. */
async function startupOnly(): Promise<void> {
  build();
  const file = path.join(OUT_DIR, 'results.json');
  const previous = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BenchResults) : undefined;
  const loadBefore = os.loadavg()[0] as number;
  const startup = await measureStartup(STARTUP_RUNS, BASE_URL);
  const startupLoadAverage: [number, number] = [loadBefore, os.loadavg()[0] as number];
  if (!previous) {
    console.log(JSON.stringify(startup, null, 2));
    return;
  }
  writeResults(
    { ...previous, startup, startupLoadAverage, startupMeasuredAt: new Date().toISOString() },
    OUT_DIR,
  );
  console.log(`results: ${path.join(OUT_DIR, 'results.md')}`);
}

async function main(): Promise<void> {
  pinLoadGenerator();
  if (ONLY && runs('startup') && !['compare', 'flow', 'signin', 'wallet', 'search', 'pglite'].some(runs))
    return startupOnly();
  const name = `idp_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
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
      rsa2048SignsPerSecond: rsaSignsPerSecond(),
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
    const seeded = await seedService(database.db, ctx, { tokensPerUser: 5, dpopJkt: dpop.jkt });
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

    const basic = basicOf(seeded.client.clientId, seeded.client.clientSecret);
    const redirect = encodeURIComponent(REDIRECT_URI);
    await settle(database.db);
    if (runs('compare')) {
      console.log('minting oidc-provider tokens…');
      const theirTokens = (await mint(providerBase, 'access_token', seeded.accessTokens.length)).values;
      const theirCodes = await mint(providerBase, 'authorization_code', onceNeeded);
      const theirRefresh = (await mint(providerBase, 'refresh_token', onceNeeded)).values;
      const theirBasic = basicOf('bench', 'bench-secret');
      const scenarios: Scenario[] = [
        {
          name: 'bare Fastify JSON route (ceiling)',
          target: 'ceiling',
          url: `${ceilingBase}/`,
          options: {},
          pid: ceiling.pid,
        },
        {
          name: `userinfo (${seeded.accessTokens.length} distinct tokens)`,
          target: 'idp',
          url: `${idpBase}/api/v1/oauth/userinfo`,
          options: bearerRequests(seeded.accessTokens),
          pid: idp.pid,
        },
        {
          name: `DPoP-bound userinfo (${seeded.dpopTokens.length} distinct tokens, a fresh proof each)`,
          target: 'idp',
          url: `${idpBase}/api/v1/oauth/userinfo`,
          options: dpopRequests(`${idpBase}/api/v1/oauth/userinfo`, seeded.dpopTokens),
          pid: idp.pid,
        },
        {
          name: `userinfo (${theirTokens.length} distinct tokens)`,
          target: 'oidc-provider',
          url: `${providerBase}/me`,
          options: bearerRequests(theirTokens),
          pid: provider.pid,
        },
        {
          name: `/me (${seeded.accessTokens.length} distinct tokens)`,
          target: 'idp',
          url: `${idpBase}/api/v1/me`,
          options: bearerRequests(seeded.accessTokens),
          pid: idp.pid,
        },
        {
          name: 'authorization code exchange (PKCE S256)',
          target: 'idp',
          url: `${idpBase}/api/v1/oauth/token`,
          options: formPosts(
            basic,
            codes,
            (code) =>
              `grant_type=authorization_code&code=${code}&redirect_uri=${redirect}&code_verifier=${CODE_VERIFIER}`,
          ),
          pid: idp.pid,
        },
        {
          name: 'ES256 authorization code exchange (PKCE S256, an ES256 client)',
          target: 'idp',
          url: `${idpBase}/api/v1/oauth/token`,
          options: formPosts(
            basicOf(seeded.es256Client.clientId, seeded.es256Client.clientSecret),
            es256Codes,
            (code) =>
              `grant_type=authorization_code&code=${code}&redirect_uri=${redirect}&code_verifier=${CODE_VERIFIER}`,
          ),
          pid: idp.pid,
        },
        {
          name: 'authorization code exchange (PKCE S256)',
          target: 'oidc-provider',
          url: `${providerBase}/token`,
          options: formPosts(
            theirBasic,
            theirCodes.values,
            (code) =>
              `grant_type=authorization_code&code=${code}&redirect_uri=${redirect}&code_verifier=${theirCodes.code_verifier}`,
          ),
          pid: provider.pid,
        },
        {
          name: 'refresh token grant (rotating)',
          target: 'idp',
          url: `${idpBase}/api/v1/oauth/token`,
          options: formPosts(
            basic,
            refreshTokens,
            (token) => `grant_type=refresh_token&refresh_token=${token}`,
          ),
          pid: idp.pid,
        },
        {
          name: 'refresh token grant (rotating)',
          target: 'oidc-provider',
          url: `${providerBase}/token`,
          options: formPosts(
            theirBasic,
            theirRefresh,
            (token) => `grant_type=refresh_token&refresh_token=${token}`,
          ),
          pid: provider.pid,
        },
      ];
      results.measurements.push(...(await measureRounds(scenarios, settings, sample)));
    }
    // oidc-provider holds some 400 MB of minted tokens: it goes before the service's own scenarios.
    await stop(provider);

    await settle(database.db);
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
      results.measurements.push(
        ...(await measureRounds(walletScenarios('idp', idpBase, idp.pid, seeded), settings, sample)),
      );
      results.ledgerChecks.postgres = await verifyLedger(database.db);
      console.log(`ledger check after the charges: ${JSON.stringify(results.ledgerChecks.postgres)}`);
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
        results.measurements.push(...(await measureRounds(scenarios, settings)));
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
        { tokensPerUser: 5, dpopJkt: dpop.jkt },
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
    writeResults(results, OUT_DIR);
    console.log(`results: ${path.join(OUT_DIR, 'results.md')}`);
    // The smoke run (CI) fails when any scenario stopped working, whatever its speed.
    const failed =
      results.measurements.reduce((sum, row) => sum + row.non2xx, 0) +
      results.flows.reduce((sum, flow) => sum + flow.failures, 0);
    const ledgerBroken = Object.values(results.ledgerChecks).some((check) => !check.ok);
    if (failed > 0 || ledgerBroken) {
      console.error(
        `${failed} failed requests or flows${ledgerBroken ? ', and the ledger check failed' : ''}`,
      );
      if (SMOKE) process.exitCode = 1;
    }
  } finally {
    for (const child of children) await stop(child);
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    rmSync(pgliteDir, { recursive: true, force: true });
  }
}

await main();
