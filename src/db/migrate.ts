import { type Kysely, type MigrationResultSet, Migrator, sql } from 'kysely';
import { migrations } from '../../migrations/index.js';

/**
 * Applies pending migrations and returns the names applied now (empty when up to date).
 * Safe for several instances at once: Kysely's migrator holds a lock row while it works.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on any database type
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  if (await isUpToDate(db)) return [];
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? '(unknown)'} failed`, { cause: result.error });
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Whether the database has applied exactly our migrations, read in one query. The migrator's own
 * check introspects the catalog for its two tables and takes its lock row first, which costs a
 * start on an existing database several hundred milliseconds on PGlite. Anything else (no
 * migration table yet, a migration pending, one this version does not know) goes to the migrator,
 * which applies what is pending or reports the mismatch as before.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on any database type
async function isUpToDate(db: Kysely<any>): Promise<boolean> {
  let applied: string[];
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    applied = rows.map((row) => row.name);
  } catch {
    return false;
  }
  const ours = Object.keys(migrations);
  return applied.length === ours.length && ours.every((name) => applied.includes(name));
}
