import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
// @ts-expect-error bin/ is plain JavaScript without declarations
import { buildIsCurrent } from '../bin/launch.js';
import { openPostgres } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { migratedDump } from './helpers/pglite-template.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated embedded database (`dumpDataDir()` tarball) that test databases start from. */
    pgliteTemplate?: string;
    /** On PostgreSQL: a migrated database that test databases are created from (`create database … template`). */
    postgresTemplate: string;
  }
}

/**
 * Before the tests:
 * - compiles the service once (`npm run build` into dist/), unless dist/ is a build of the sources
 *   as they are: the tests that start `bin/idp.js` and `bin/server.js` as child processes run the
 *   build (IDP_RUN_BUILD=1, see bin/launch.js), the code the Docker image runs, instead of
 *   transpiling the sources at every start;
 * - on PGlite, migrates one embedded database and saves it as a template. Creating an embedded
 *   database runs initdb (about 4 s of CPU here) and then the migrations; a copy of the template
 *   opens in under a second, and every test file makes at least one.
 * - on PostgreSQL, likewise migrates one database that the server copies for each test database
 *   (`create database … template`, 0.1 to 0.5 s here), instead of running every migration again
 *   in each (0.8 to 1.7 s each, measured on two busy cores).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = path.resolve(import.meta.dirname, '..');
  // Not again when dist/ was built after the last change to its sources (a second run, as CI's).
  if (!buildIsCurrent('main', root)) {
    execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {
      cwd: root,
      stdio: 'inherit',
    });
  }

  // Which database, Redis and browser this run uses, said once, so a log shows what was tested.
  const where = (url: string) => {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`; // never the password
  };
  process.stdout.write(
    [
      `tests: database ${process.env.TEST_DATABASE_URL ? `PostgreSQL at ${where(process.env.TEST_DATABASE_URL)}` : 'PGlite (embedded)'}`,
      `Redis ${process.env.TEST_REDIS_URL ? where(process.env.TEST_REDIS_URL) : 'none (TEST_REDIS_URL unset: its tests are skipped)'}`,
      `browser ${process.env.IDP_SKIP_BROWSER_TESTS === '1' ? 'none (IDP_SKIP_BROWSER_TESTS=1)' : '/usr/bin/chromium'}\n`,
    ].join('; '),
  );

  if (process.env.TEST_DATABASE_URL) return postgresTemplate(project, process.env.TEST_DATABASE_URL);
  return pgliteTemplate(project);
}

/** Migrates an embedded database and saves it as a tarball; the returned teardown removes it. */
async function pgliteTemplate(project: TestProject): Promise<() => Promise<void>> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'idp-test-template-'));
  const template = path.join(folder, 'migrated.tar');
  await writeFile(template, Buffer.from(await (await migratedDump()).arrayBuffer()));
  project.provide('pgliteTemplate', template);
  return () => rm(folder, { recursive: true, force: true });
}

/** Creates and migrates the PostgreSQL template database; the returned teardown drops it. */
async function postgresTemplate(project: TestProject, serverUrl: string): Promise<() => Promise<void>> {
  const name = `idp_test_template_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // Closed before any copy: PostgreSQL copies a template only while nobody is connected to it.
  const database = openPostgres({ url: url.toString(), poolMax: 1 });
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  project.provide('postgresTemplate', name);
  return () => admin(`drop database if exists ${name} with (force)`);
}
