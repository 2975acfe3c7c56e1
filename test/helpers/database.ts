import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { migrations } from '../../migrations/index.js';
import { type DatabaseHandle, openPglite, openPostgres } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migratedDump } from './pglite-template.js';

/**
 * A fresh, migrated database for one test file: PGlite in memory by default, or a uniquely named
 * database on the PostgreSQL server of TEST_DATABASE_URL (created here, dropped by `drop`).
 */
export interface TestDatabase extends DatabaseHandle {
  /** Set on PostgreSQL: the URL of this file's own database, for child processes. */
  url?: string;
  /** Closes the connections and removes the database. */
  drop(): Promise<void>;
}

export const usingPostgres = Boolean(process.env.TEST_DATABASE_URL);

/**
 * The Redis of the tests that need one (the rate limits shared by instances), from TEST_REDIS_URL;
 * undefined when it is not set, and those tests say so by name and are skipped. CI sets it.
 */
export const testRedisUrl = process.env.TEST_REDIS_URL || undefined;

/** A URL for a database named `name` on the TEST_DATABASE_URL server. */
function databaseUrl(name: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database on the test server and returns its URL (PostgreSQL only). */
export function createEmptyPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  return createPostgresDatabase();
}

/**
 * Creates a migrated database on the test server, a copy of the template test/global-setup.ts
 * made (PostgreSQL only): a child process that opens it finds nothing to migrate.
 */
export function createMigratedPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  return createPostgresDatabase(inject('postgresTemplate'));
}

async function createPostgresDatabase(
  template?: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `idp_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`create database ${name}${template ? ` template ${template}` : ''}`));
  return {
    url: databaseUrl(name),
    drop: () =>
      admin((client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

let template: Promise<Blob> | undefined;

/**
 * The migrated embedded database that test/global-setup.ts saved, read once per worker. A
 * PostgreSQL run saves none (only a few files start PGlite there): it is made here when first
 * asked for, once per worker.
 */
export function migratedTemplate(): Promise<Blob> {
  const saved = inject('pgliteTemplate');
  template ??= saved ? readFile(saved).then((bytes) => new Blob([bytes])) : migratedDump();
  return template;
}

/**
 * A database of the test file's own: a copy of the migrated template of test/global-setup.ts, or
 * with `migrate: false` one no migration has touched.
 */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  let handle: TestDatabase;
  if (usingPostgres) {
    const created =
      options.migrate === false
        ? await createEmptyPostgresDatabase()
        : await createMigratedPostgresDatabase();
    const database = openPostgres({ url: created.url, poolMax: 5 });
    handle = {
      ...database,
      url: created.url,
      drop: async () => {
        await database.close();
        await created.drop();
      },
    };
  } else {
    const database = await openPglite(undefined, { from: await migratedTemplate() });
    handle = { ...database, drop: () => database.close() };
    // Not migrated: the template without its schema, instead of an embedded database of its own
    // (its initdb costs seconds of CPU). The migrations make everything they need in this schema.
    if (options.migrate === false) await emptySchema(handle);
  }
  // On the template this finds nothing to do; it still checks that the template is current.
  if (options.migrate !== false) await migrateToLatest(handle.db);
  return handle;
}

/**
 * A database of the test file's own migrated up to `name` (included), and the migrator to go on or
 * back from there: for the test of a migration that must keep or convert what older ones wrote.
 */
export async function createTestDatabaseAt(
  name: string,
): Promise<{ database: TestDatabase; migrator: Migrator }> {
  const database = await createTestDatabase({ migrate: false });
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateTo(name);
  if (error) throw error;
  return { database, migrator };
}

/** Drops everything the migrations made (they make all of it in the public schema). */
async function emptySchema(database: DatabaseHandle): Promise<void> {
  await sql`drop schema public cascade`.execute(database.db);
  await sql`create schema public`.execute(database.db);
}
