import { type Kysely, sql } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { searchUsers } from '../src/modules/search/search.repository.js';

/**
 * Users for the search scenarios, generated in the database itself (fast enough for a million):
 * usernames `u<n>`, display names `Player <8 hex digits>`, every tenth without a display name.
 * The password hash is a placeholder: these users never sign in.
 */
export async function growUsers(db: Kysely<Database>, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += 100_000) {
    const end = Math.min(to, start + 100_000) - 1;
    await sql`
      insert into users (username, password_hash, display_name, verification_level, created_at, updated_at)
      select 'u' || n, 'placeholder',
        case when n % 10 = 0 then null else 'Player ' || substr(md5(n::text), 1, 8) end,
        n % 3, now(), now()
      from generate_series(${start}::int, ${end}::int) as n`.execute(db);
  }
  // Flush the GIN pending lists and refresh the statistics, as autovacuum would after a bulk load.
  await sql`vacuum analyze users`.execute(db);
}

/** Typical queries: a common prefix, a rare substring, an exact username. */
export const SEARCH_QUERIES = [
  { name: 'common prefix', q: 'u12' },
  { name: 'rare substring', q: 'beef' },
  { name: 'exact username', q: 'u54321' },
] as const;

/**
 * The plan of the service's own search query (with its parameters written in, as PostgreSQL plans
 * the first executions of a prepared statement), for the results file.
 */
export async function explainSearch(db: Kysely<Database>, q: string): Promise<string> {
  const statements = await captureSql(db, () =>
    searchUsers(db, { term: q, usernameOnly: false, limit: 20, now: new Date() }),
  );
  const plans: string[] = [];
  for (const statement of statements) {
    const plan = await sql<{ 'QUERY PLAN': string }>`explain (analyze, costs off, timing off) ${sql.raw(
      inline(statement.sql, statement.parameters),
    )}`.execute(db);
    plans.push(plan.rows.map((row) => row['QUERY PLAN']).join('\n'));
  }
  return plans.join('\n\n');
}

/** Runs `work` once and returns the statements it sent. */
async function captureSql(
  db: Kysely<Database>,
  work: () => Promise<unknown>,
): Promise<Array<{ sql: string; parameters: readonly unknown[] }>> {
  const captured: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  const original = db.getExecutor().executeQuery.bind(db.getExecutor());
  const executor = db.getExecutor() as { executeQuery: typeof original };
  executor.executeQuery = async (query) => {
    captured.push({ sql: query.sql, parameters: query.parameters });
    return original(query);
  };
  try {
    await work();
  } finally {
    executor.executeQuery = original;
  }
  if (captured.length === 0) throw new Error('no query was sent');
  return captured;
}

/** The statement with its parameters written in, for EXPLAIN (bench only: trusted values). */
function inline(text: string, parameters: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, index: string) => {
    const value = parameters[Number(index) - 1];
    if (value instanceof Date) return `'${value.toISOString()}'::timestamptz`;
    if (typeof value === 'number') return String(value);
    return `'${String(value).replaceAll("'", "''")}'`;
  });
}
