/**
 * `npm run bench`: measures the service the way its users load it, against a baseline measured in
 * the same run on the same machine (absolute numbers drift between machines; ratios do not).
 *
 * The server runs as its own process (`node bin/server.js`) on PostgreSQL (DATABASE_URL, default the
 * machine's), pinned to core 0 when `taskset` exists; this process and autocannon run on core 1.
 * Results: bench/results.md (a table) and bench/results.json.
 *
 * BENCH_SECONDS (default 10) and BENCH_WARMUP_SECONDS (default 3) set the length of each run;
 * BENCH_RUNS (default 3) how many runs each scenario gets (the median is reported).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import type { AppDeps } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openPostgres } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { projectRoot } from '../src/lib/paths.js';
import { generateSecret, hashSecret } from '../src/lib/secrets.js';
import { createUser } from '../src/modules/accounts/accounts.service.js';
import { createClient } from '../src/modules/clients/clients.service.js';
import { insertGrant } from '../src/modules/oauth/oauth.repository.js';
import { normalizeScopes } from '../src/modules/oauth/scopes.js';
import { issueTokenSet } from '../src/modules/oauth/tokens.service.js';
import { credit, type LedgerCheck, verifyLedger } from '../src/modules/wallet/wallet.service.js';
import { type BenchResults, type Measurement, writeMarkdown } from './report.js';
import { explainSearch, growUsers, SEARCH_QUERIES } from './search.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** BENCH_SEARCH_SIZES=100000,1000000: the user counts the search is measured at. */
const SEARCH_SIZES = (process.env.BENCH_SEARCH_SIZES ?? '100000,1000000').split(',').map(Number);
/** BENCH_ONLY=userinfo (or exchange, ceiling): run the scenarios whose name contains it. */
const ONLY = process.env.BENCH_ONLY;
const CONNECTIONS = 32;
/**
 * The load at which search latency is judged: this many clients searching at once, each sending
 * its next search as soon as the previous one is answered. With 32 connections the server is
 * saturated and the median is only queueing (connections ÷ throughput), which says nothing about
 * the search. (A fixed request rate would do too, but autocannon's rate lets each connection send
 * its whole quota as fast as it can at the start of every second, so it measures that burst.)
 */
const SEARCH_CONNECTIONS = 8;
const BASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return true;
  } catch {
    return false;
  }
})();

/**
 * oidc-provider 9 (in-memory store) measured on this kind of machine with the same pinning, next to
 * a bare Fastify route at REFERENCE_CEILING requests/s. A run compares against these scaled by its
 * own ceiling, since absolute numbers drift between machines and runs.
 */
const OIDC_PROVIDER_REFERENCE = { userinfo: 5600, codeExchange: 1500, refresh: 1700 };
const REFERENCE_CEILING = 65_000;

function pinned(command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const [file, argv] = hasTaskset ? ['taskset', ['-c', '0', command, ...args]] : [command, args];
  return spawn(file, argv, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Resident set size of a process in MiB, from /proc (0 where there is no /proc). */
function rssMb(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return 0;
  }
}

async function waitForListening(child: ChildProcess): Promise<string> {
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

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** One autocannon run; `next` gives each request its headers and body. */
async function load(
  url: string,
  options: {
    method?: 'GET' | 'POST';
    seconds: number;
    /** Concurrent connections; default CONNECTIONS. */
    connections?: number;
    next?: () => { headers?: Record<string, string>; body?: string };
  },
): Promise<autocannon.Result> {
  return autocannon({
    url,
    method: options.method ?? 'GET',
    connections: options.connections ?? CONNECTIONS,
    duration: options.seconds,
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

async function measure(
  scenario: string,
  url: string,
  options: Parameters<typeof load>[1] extends infer O ? Omit<O & object, 'seconds'> : never,
): Promise<Measurement> {
  if (ONLY && !scenario.includes(ONLY)) {
    return { scenario, requestsPerSecond: 0, p50Ms: 0, p99Ms: 0, non2xx: 0, runs: [] };
  }
  await load(url, { ...options, seconds: WARMUP });
  const results: autocannon.Result[] = [];
  for (let run = 0; run < RUNS; run++) results.push(await load(url, { ...options, seconds: SECONDS }));
  const sorted = [...results].sort((a, b) => a.requests.average - b.requests.average);
  const median = sorted[Math.floor(sorted.length / 2)] as autocannon.Result;
  const measurement = {
    scenario,
    requestsPerSecond: Math.round(median.requests.average),
    p50Ms: median.latency.p50,
    p99Ms: median.latency.p99,
    non2xx: results.reduce((sum, result) => sum + result.non2xx, 0),
    runs: results.map((result) => Math.round(result.requests.average)),
  };
  console.log(JSON.stringify(measurement));
  return measurement;
}

async function main(): Promise<void> {
  // This process and autocannon on core 1, the server on core 0.
  if (hasTaskset) execFileSync('taskset', ['-cp', '1', String(process.pid)]);
  const name = `idp_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const children: ChildProcess[] = [];
  const database = openPostgres({ url: databaseUrl, poolMax: 4 });
  try {
    await migrateToLatest(database.db);
    const config = loadConfig({ DATABASE_URL: databaseUrl, PUBLIC_URL: 'http://127.0.0.1:3900' });
    const deps: AppDeps = { config, db: database.db, clock: systemClock };

    // Seed: one client, many users, a token per user, and codes to exchange.
    const client = await createClient(database.db, systemClock, {
      name: 'Bench',
      siteUrl: 'https://bench.example',
      redirectUris: ['https://bench.example/cb'],
    });
    const clientRow = await database.db
      .selectFrom('clients')
      .selectAll()
      .where('client_id', '=', client.client_id)
      .executeTakeFirstOrThrow();
    const scopes = normalizeScopes(['openid', 'profile', 'email', 'verified']);
    /** An access token as the token endpoint issues it, for a grant of `tokenScopes`. */
    const issueAccessToken = (userId: number, clientPk: number, tokenScopes: string[]) =>
      database.db.transaction().execute(async (trx) => {
        const grant = await insertGrant(trx, {
          userId,
          clientPk,
          scopes: tokenScopes,
          codeHash: null,
          authTime: systemClock.now(),
          at: systemClock.now(),
        });
        const issued = await issueTokenSet(trx, deps, {
          grantId: grant.id,
          userId,
          clientPk,
          scopes: tokenScopes,
          withRefreshToken: false,
        });
        return issued.accessToken;
      });
    const tokens: string[] = [];
    const userIds: number[] = [];
    for (let i = 0; i < 200; i++) {
      const user = await createUser(database.db, systemClock, {
        username: `bench_user_${i}`,
        password: 'bench password 123',
        email: `bench${i}@example.com`,
        displayName: `Bench ${i}`,
        verificationLevel: i % 3,
      });
      userIds.push(user.id);
      for (let j = 0; j < 5; j++) tokens.push(await issueAccessToken(user.id, clientRow.id, scopes));
    }
    // Codes for every exchange of every run, written in bulk (each is single use).
    const codesNeeded = 4000 * (WARMUP + SECONDS * RUNS);
    const codes: string[] = [];
    const now = systemClock.now();
    for (let offset = 0; offset < codesNeeded; offset += 1000) {
      const batch = Array.from({ length: Math.min(1000, codesNeeded - offset) }, (_, i) => {
        const code = generateSecret('authorizationCode');
        codes.push(code);
        return {
          code_hash: hashSecret(code),
          client_pk: clientRow.id,
          user_id: userIds[(offset + i) % userIds.length] as number,
          redirect_uri: 'https://bench.example/cb',
          scopes,
          code_challenge: null,
          nonce: 'n',
          auth_time: now,
          created_at: now,
          expires_at: new Date(now.getTime() + 3600_000),
        };
      });
      await database.db.insertInto('authorization_codes').values(batch).execute();
    }

    // Refresh tokens for every refresh of every run (each works once: it rotates), on a grant per user.
    const refreshNeeded = 3000 * (WARMUP + SECONDS * RUNS);
    const refreshGrants: number[] = [];
    for (const userId of userIds) {
      const grant = await insertGrant(database.db, {
        userId,
        clientPk: clientRow.id,
        scopes,
        codeHash: null,
        authTime: now,
        at: now,
      });
      refreshGrants.push(grant.id);
    }
    const refreshTokens: string[] = [];
    for (let offset = 0; offset < refreshNeeded; offset += 1000) {
      const batch = Array.from({ length: Math.min(1000, refreshNeeded - offset) }, (_, i) => {
        const token = generateSecret('refreshToken');
        refreshTokens.push(token);
        return {
          token_hash: hashSecret(token),
          grant_id: refreshGrants[(offset + i) % refreshGrants.length] as number,
          created_at: now,
          expires_at: new Date(now.getTime() + 24 * 3600_000),
        };
      });
      await database.db.insertInto('refresh_tokens').values(batch).execute();
    }

    // BENCH_PROFILE=1: a V8 CPU profile of the server in bench/profiles/ (open it in Chrome DevTools).
    const profileArgs = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=bench/profiles'] : [];
    // The server runs the compiled build, as the Docker image does (no tsx in its memory or CPU).
    execFileSync(path.join(projectRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {
      cwd: projectRoot,
      stdio: 'inherit',
    });
    const server = pinned(process.execPath, [...profileArgs, 'bin/server.js'], {
      ...process.env,
      IDP_RUN_BUILD: '1',
      DATABASE_URL: databaseUrl,
      PORT: '3900',
      HOST: '127.0.0.1',
      PUBLIC_URL: 'http://127.0.0.1:3900',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      COOKIE_SECRET: randomBytes(32).toString('hex'),
      // The limiter runs on every request, as in production, with limits a load test never reaches
      // (one load generator is one IP, and the hot-wallet scenario is one token).
      RATE_LIMIT_PUBLIC_PER_MIN: '1000000',
      RATE_LIMIT_TOKEN_PER_MIN: '1000000',
      RATE_LIMIT_BEARER_PER_MIN: '1000000',
    });
    children.push(server);
    // The service logs at warn in production runs, so wait on the port instead of the log line.
    await waitForPort('http://127.0.0.1:3900/health/live');

    const ceiling = pinned(process.execPath, [path.join('bench', 'ceiling-server.mjs')], {
      ...process.env,
      PORT: '3901',
    });
    children.push(ceiling);
    await waitForListening(ceiling);

    // Resident memory of the server: once idle, then the highest seen while it is under load.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const idleRssMb = rssMb(server.pid);
    let peakRssMb = idleRssMb;
    const sampler = setInterval(() => {
      peakRssMb = Math.max(peakRssMb, rssMb(server.pid));
    }, 250);

    const results: Measurement[] = [];
    results.push(await measure('bare Fastify JSON route (ceiling)', 'http://127.0.0.1:3901/', {}));
    let tokenIndex = 0;
    results.push(
      await measure(
        `userinfo (${tokens.length} distinct tokens)`,
        'http://127.0.0.1:3900/api/v1/oauth/userinfo',
        {
          next: () => ({ headers: { authorization: `Bearer ${tokens[tokenIndex++ % tokens.length]}` } }),
        },
      ),
    );
    results.push(
      await measure(`/me (${tokens.length} distinct tokens)`, 'http://127.0.0.1:3900/api/v1/me', {
        next: () => ({ headers: { authorization: `Bearer ${tokens[tokenIndex++ % tokens.length]}` } }),
      }),
    );
    let codeIndex = 0;
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    results.push(
      await measure('authorization code exchange', 'http://127.0.0.1:3900/api/v1/oauth/token', {
        method: 'POST',
        next: () => ({
          headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
          body: `grant_type=authorization_code&code=${codes[codeIndex++ % codes.length]}&redirect_uri=${encodeURIComponent('https://bench.example/cb')}`,
        }),
      }),
    );
    if (codeIndex > codes.length)
      console.warn(`codes ran out: ${codeIndex} requests for ${codes.length} codes`);
    let refreshIndex = 0;
    results.push(
      await measure('refresh token grant', 'http://127.0.0.1:3900/api/v1/oauth/token', {
        method: 'POST',
        next: () => ({
          headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
          body: `grant_type=refresh_token&refresh_token=${refreshTokens[refreshIndex++ % refreshTokens.length]}`,
        }),
      }),
    );
    if (refreshIndex > refreshTokens.length)
      console.warn(`refresh tokens ran out: ${refreshIndex} requests for ${refreshTokens.length} tokens`);

    // Wallet charges (distinct idempotency keys) spread over every user, then on one hot wallet.
    // Every user is credited far more than the runs can spend, so every charge should succeed.
    const shop = await createClient(database.db, systemClock, {
      name: 'Bench shop',
      siteUrl: 'https://shop.bench.example',
      redirectUris: ['https://shop.bench.example/cb'],
      wallet: true,
    });
    const shopRow = await database.db
      .selectFrom('clients')
      .select('id')
      .where('client_id', '=', shop.client_id)
      .executeTakeFirstOrThrow();
    const walletTokens: string[] = [];
    for (const [i, userId] of userIds.entries()) {
      await credit(database.db, systemClock, `bench_user_${i}`, { amount: 1_000_000_000 });
      walletTokens.push(await issueAccessToken(userId, shopRow.id, normalizeScopes(['openid', 'wallet'])));
    }
    let chargeIndex = 0;
    const chargeRequest = (token: string) => ({
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        amount: 0.01,
        currency: 'COIN',
        description: 'bench charge',
        idempotency_key: `bench-${chargeIndex++}`,
      }),
    });
    results.push(
      await measure(
        `wallet charges over ${walletTokens.length} users`,
        'http://127.0.0.1:3900/api/v1/wallet/charge',
        {
          method: 'POST',
          next: () => chargeRequest(walletTokens[chargeIndex % walletTokens.length] as string),
        },
      ),
    );
    results.push(
      await measure('wallet charges on one hot wallet', 'http://127.0.0.1:3900/api/v1/wallet/charge', {
        method: 'POST',
        next: () => chargeRequest(walletTokens[0] as string),
      }),
    );
    const ledgerCheck = await verifyLedger(database.db);
    console.log(`ledger check after the charges: ${JSON.stringify(ledgerCheck)}`);

    // Search at 100k and then 1M users (BENCH_SEARCH_SIZES to change), with the plans PostgreSQL chose.
    const plans: Record<string, string> = {};
    let grown = 200;
    for (const size of SEARCH_SIZES) {
      if (ONLY && !'search'.includes(ONLY)) break;
      console.log(`growing to ${size} users…`);
      await growUsers(database.db, grown, size);
      grown = size;
      for (const query of SEARCH_QUERIES) {
        plans[`${query.name} at ${size}`] = await explainSearch(database.db, query.q);
        const scenario = `search, ${query.name} ("${query.q}"), ${size.toLocaleString('en')} users`;
        const searchUrl = `http://127.0.0.1:3900/api/users/search?q=${encodeURIComponent(query.q)}`;
        results.push(await measure(scenario, searchUrl, {}));
        results.push(
          await measure(`${scenario}, ${SEARCH_CONNECTIONS} clients`, searchUrl, {
            connections: SEARCH_CONNECTIONS,
          }),
        );
      }
    }
    clearInterval(sampler);
    report(results, plans, ledgerCheck, { idleRssMb, peakRssMb });
  } finally {
    for (const child of children) await stop(child);
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

async function waitForPort(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer`);
}

function report(
  measured: Measurement[],
  plans: Record<string, string>,
  ledgerCheck: LedgerCheck | undefined,
  memory: { idleRssMb: number; peakRssMb: number },
): void {
  // Scenarios BENCH_ONLY skipped are left out; without the ceiling there are no ratios.
  const results = measured.filter((result) => result.runs.length > 0);
  const ceiling =
    results.find((result) => result.scenario.includes('ceiling'))?.requestsPerSecond ?? Number.NaN;
  const reference = (scenario: string) =>
    scenario.startsWith('userinfo')
      ? OIDC_PROVIDER_REFERENCE.userinfo
      : scenario.startsWith('authorization code')
        ? OIDC_PROVIDER_REFERENCE.codeExchange
        : scenario.startsWith('refresh')
          ? OIDC_PROVIDER_REFERENCE.refresh
          : undefined;
  const scale = ceiling / REFERENCE_CEILING;
  const rows = results.map((result) => {
    const ref = reference(result.scenario);
    const scaled = ref ? Math.round(ref * scale) : null;
    return {
      ...result,
      ofCeiling: Number.isNaN(ceiling) ? null : result.requestsPerSecond / ceiling,
      oidcProviderScaled: Number.isNaN(ceiling) ? null : scaled,
      vsOidcProvider: scaled && !Number.isNaN(ceiling) ? result.requestsPerSecond / scaled : null,
      meetsTarget: scaled && !Number.isNaN(ceiling) ? result.requestsPerSecond >= scaled : null,
    };
  });
  const json: BenchResults = {
    measuredAt: new Date().toISOString(),
    machine: { cores: os.cpus().length, node: process.version, pinned: hasTaskset },
    settings: {
      seconds: SECONDS,
      warmupSeconds: WARMUP,
      runs: RUNS,
      connections: CONNECTIONS,
      searchConnections: SEARCH_CONNECTIONS,
      searchSizes: SEARCH_SIZES,
      oidcProviderReference: { ...OIDC_PROVIDER_REFERENCE, ceiling: REFERENCE_CEILING },
    },
    results: rows,
    searchPlans: plans,
    ledgerCheck: ledgerCheck ?? null,
    memory,
  };
  writeFileSync(path.join(projectRoot, 'bench', 'results.json'), `${JSON.stringify(json, null, 2)}\n`);
  writeMarkdown(json);
}

await main();
