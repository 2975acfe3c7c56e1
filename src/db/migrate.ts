import { type Kysely, type MigrationResultSet, Migrator } from 'kysely';
import { migrations } from '../../migrations/index.js';

/**
 * Applies pending migrations and returns the names applied now (empty when up to date).
 * Safe for several instances at once: Kysely's migrator holds a lock row while it works.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations work on any database type
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? '(unknown)'} failed`, { cause: result.error });
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
