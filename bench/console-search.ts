/**
 * The console's user search at scale, run by hand (never in CI):
 *
 *   npx tsx bench/console-search.ts
 *
 * On the PostgreSQL database of BENCH_DATABASE_URL (default `idp_console_bench` on the machine's
 * server, created when missing), grown to BENCH_USERS users (default 10,000,000) the way the public
 * search benchmark grows them (bench/search.ts `growUsers`: usernames `u<n>`, display names
 * `Player <8 hex digits>`, every tenth without one), with e-mail addresses too (`u<n>@` one of five
 * domains, every seventh without one), since the console also searches addresses. Then each typical
 * query runs BENCH_ROUNDS times from BENCH_CLIENTS clients at once through the console's own search
 * service, and the latencies (p50, p95, p99, max) and PostgreSQL's plans are printed. The target is
 * p99 under 100 ms. Growing 10 million users takes about 15 minutes on two cores; a database
 * already that large is used as it is.
 */

import { type Kysely, type KyselyPlugin, Migrator, sql } from 'kysely';
import pg from 'pg';
import { migrations } from '../migrations/index.js';
import { openPostgres } from '../src/db/database.js';
import type { Database } from '../src/db/schema.js';
import { searchUsersForConsole } from '../src/modules/user-admin/user-search.service.js';

const URL_TEXT = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/idp_console_bench';
const USERS = Number(process.env.BENCH_USERS ?? 10_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const TARGET_P99_MS = 100;

/** What operators type: an exact name, address or id, the start of one, a rare part of one. */
export const CONSOLE_QUERIES = [
  { name: 'exact username', q: 'u54321' },
  { name: 'exact e-mail', q: 'u777778@inbox.example' },
  { name: 'display name', q: 'Player 5f3a' },
  { name: 'id', q: '4242424' },
  { name: 'common prefix', q: 'u12' },
  { name: 'e-mail prefix', q: 'u888889@' },
  { name: 'rare substring', q: 'beef' },
  { name: 'common prefix, page 3', q: 'u12', page: 3 },
  { name: 'short term (prefix only)', q: 'u9' },
  // Inside most addresses: the substring step meets its time bound (SUBSTRING_TIMEOUT_MS).
  { name: 'common substring (bounded)', q: 'example' },
] as const;

/** Creates the benchmark's database when it does not exist yet. */
async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  const admin = new pg.Client({
    connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString(),
  });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await admin.query(`create database "${name.replaceAll('"', '""')}"`);
  } finally {
    await admin.end();
  }
}

/**
 * Applies the migrations, in any order: a benchmark database grown before a later-numbered
 * migration landed has it applied out of order, which the server's own migrator refuses.
 */
async function migrate(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    allowUnorderedMigrations: true,
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
}

/** Users `from` … `to - 1`, as bench/search.ts grows them, with addresses; in steps of 100,000. */
async function growUsersWithEmail(db: Kysely<Database>, from: number, to: number): Promise<void> {
  const started = Date.now();
  for (let start = from; start < to; start += 100_000) {
    const end = Math.min(to, start + 100_000) - 1;
    await sql`
      insert into users (username, password_hash, display_name, email, email_verified, verification_level,
        created_at, updated_at)
      select 'u' || n, 'placeholder',
        case when n % 10 = 0 then null else 'Player ' || substr(md5(n::text), 1, 8) end,
        case when n % 7 = 0 then null
          else 'u' || n || '@' || (array['example.com', 'mail.example', 'post.example', 'inbox.example',
            'example.org'])[n % 5 + 1] end,
        n % 2 = 0, n % 3, now(), now()
      from generate_series(${start}::int, ${end}::int) as n`.execute(db);
    if ((end + 1) % 1_000_000 === 0)
      console.log(
        `  ${(end + 1).toLocaleString('en')} users, ${Math.round((Date.now() - started) / 1000)} s`,
      );
  }
  // Flush the GIN pending lists and refresh the statistics, as autovacuum would after a bulk load.
  await sql`vacuum analyze users`.execute(db);
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? 0;
}

/** `rounds` searches from `clients` at once; each latency in ms. */
async function measure(
  db: Kysely<Database>,
  query: { q: string; page?: number },
  rounds: number,
  clients: number,
): Promise<number[]> {
  const latencies: number[] = [];
  let left = rounds;
  const worker = async () => {
    while (left > 0) {
      left -= 1;
      const started = performance.now();
      await searchUsersForConsole(db, { q: query.q, page: query.page });
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  return latencies.sort((a, b) => a - b);
}

/** EXPLAIN ANALYZE of every statement one search sends (in its transaction too), parameters written in. */
async function explain(db: Kysely<Database>, query: { q: string; page?: number }): Promise<string> {
  const statements: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  // A plugin sees each query of `db` and of the transactions it opens; it changes none.
  const capture: KyselyPlugin = {
    transformQuery: (args) => {
      const compiled = db.getExecutor().compileQuery(args.node, args.queryId);
      if (/^\s*select/i.test(compiled.sql) && !/set_config/.test(compiled.sql)) statements.push(compiled);
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  await searchUsersForConsole(db.withPlugin(capture), { q: query.q, page: query.page });
  const plans: string[] = [];
  for (const statement of statements) {
    const inlined = statement.sql.replace(/\$(\d+)/g, (_, index: string) => {
      const value = statement.parameters[Number(index) - 1];
      return typeof value === 'number' ? String(value) : `'${String(value).replaceAll("'", "''")}'`;
    });
    // Under the settings the search's substring step runs with (user-search.repository.ts).
    const plan = await db
      .transaction()
      .execute(async (trx) => {
        await sql`select set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true),
          set_config('statement_timeout', '10000', true)`.execute(trx);
        return sql<{
          'QUERY PLAN': string;
        }>`explain (analyze, costs off, timing off) ${sql.raw(inlined)}`.execute(trx);
      })
      .catch((error: unknown) => ({
        rows: [{ 'QUERY PLAN': `(not finished: ${(error as Error).message})` }],
      }));
    plans.push(plan.rows.map((row) => row['QUERY PLAN']).join('\n'));
  }
  return plans.join('\n\n');
}

async function main(): Promise<void> {
  await ensureDatabase(URL_TEXT);
  const { db, close } = openPostgres({ url: URL_TEXT, poolMax: CLIENTS + 1 });
  try {
    await migrate(db);
    const have = Number(
      (
        await sql<{ n: string }>`select count(*) as n from users where password_hash = 'placeholder'`.execute(
          db,
        )
      ).rows[0]?.n ?? 0,
    );
    if (have < USERS) {
      console.log(`growing from ${have.toLocaleString('en')} to ${USERS.toLocaleString('en')} users…`);
      await growUsersWithEmail(db, have, USERS);
    }
    const total = Number((await sql<{ n: string }>`select count(*) as n from users`.execute(db)).rows[0]?.n);
    console.log(
      `\n${total.toLocaleString('en')} users; ${ROUNDS} searches per query from ${CLIENTS} clients\n`,
    );
    console.log('| query | term | rows | p50 ms | p95 ms | p99 ms | max ms | p99 < 100 ms |');
    console.log('|---|---|---|---|---|---|---|---|');
    const plans: string[] = [];
    let failed = 0;
    for (const query of CONSOLE_QUERIES) {
      // Warm the caches and the pool's prepared plans as a running server's are.
      const first = await searchUsersForConsole(db, {
        q: query.q,
        page: 'page' in query ? query.page : undefined,
      });
      await measure(db, query, Math.min(20, ROUNDS), CLIENTS);
      const latencies = await measure(db, query, ROUNDS, CLIENTS);
      const p99 = percentile(latencies, 99);
      const pass = p99 < TARGET_P99_MS;
      if (!pass && !query.name.includes('bounded')) failed += 1;
      const ms = (value: number) => value.toFixed(1);
      console.log(
        `| ${query.name} | \`${query.q}\` | ${first.rows.length}${first.partial ? ' (partial)' : ''} | ${ms(percentile(latencies, 50))} | ${ms(percentile(latencies, 95))} | ${ms(p99)} | ${ms(latencies.at(-1) ?? 0)} | ${pass ? 'yes' : 'no'} |`,
      );
      plans.push(`### ${query.name} (\`${query.q}\`)\n\n\`\`\`\n${await explain(db, query)}\n\`\`\``);
    }
    console.log(`\n${plans.join('\n\n')}`);
    if (failed > 0) process.exitCode = 1;
  } finally {
    await close();
  }
}

await main();
