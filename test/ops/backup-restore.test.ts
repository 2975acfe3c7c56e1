import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { childEnv, projectRoot, stopAllChildren, succeeded } from '../helpers/cli.js';
import { type Idp, sharedInProcessCli } from '../helpers/cli-in-process.js';
import { createEmptyPostgresDatabase, usingPostgres } from '../helpers/database.js';

/**
 * The backup and restore procedures of docs/operating.md, run as they are written there (real
 * processes: bash, pg_dump, pg_restore, `npx idp`), on a database that the operator CLI filled:
 * every table must come back with the same rows. The CLI's commands around the blocks run in
 * process through its own parsing and execution (test/helpers/cli-in-process.ts) on the same
 * database, which they let go of before a block runs.
 */
const guide = await readFile(path.join(projectRoot, 'docs', 'operating.md'), 'utf8');

/** The shell block that follows `<!-- backup:NAME -->` in the guide. */
function block(name: string): string {
  const found = new RegExp(`<!-- backup:${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(guide);
  if (!found) throw new Error(`docs/operating.md has no backup:${name} block`);
  return found[1] as string;
}

/** Runs a block with bash, in `cwd`, with the environment of the CLI (and `npx idp` on its PATH). */
function shell(script: string, cwd: string, env: Record<string, string>): void {
  const result = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd, env, encoding: 'utf8' });
  expect(result.status, `${script}\n${result.stdout}\n${result.stderr}`).toBe(0);
}

/** Row counts of every table, and the values that must survive exactly. */
async function snapshot(db: Kysely<Database>) {
  const tables = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(db);
  const counts: Record<string, number> = {};
  for (const { name } of tables.rows) {
    const count = await sql<{ n: string }>`select count(*) as n from ${sql.table(name)}`.execute(db);
    counts[name] = Number(count.rows[0]?.n);
  }
  const users = await db.selectFrom('users').select(['id', 'username', 'password_hash']).execute();
  const keys = await db.selectFrom('signing_keys').select(['kid']).orderBy('kid').execute();
  const balances = await db.selectFrom('wallets').select(['user_id', 'balance']).execute();
  return { counts, users, keys, balances };
}

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'idp-backup-'));
});
afterAll(async () => {
  await stopAllChildren();
  await rm(work, { recursive: true, force: true });
});

/** Fills a database through the CLI: a user with a wallet credit, a site, a rotated signing key. */
async function fill(idp: Idp): Promise<void> {
  succeeded(
    await idp(
      ['users', 'create', '--username', 'alice', '--password-stdin', '--json'],
      'correct horse battery',
    ),
  );
  succeeded(
    await idp([
      'clients',
      'create',
      '--name',
      'Shop',
      '--site-url',
      'https://shop.example',
      '--redirect-uri',
      'https://shop.example/callback',
      '--wallet',
      '--json',
    ]),
  );
  succeeded(await idp(['wallet', 'credit', 'alice', '12.50', '--json']));
  succeeded(await idp(['keys', 'rotate', '--json']));
}

/** Fills the database of `env` (migrated first) and returns its snapshot, letting go of it after. */
async function filled(env: Record<string, string>): Promise<Awaited<ReturnType<typeof snapshot>>> {
  const cli = await sharedInProcessCli(env, { fromTemplate: true, migrate: false });
  try {
    succeeded(await cli.idp(['migrate', '--json']));
    await fill(cli.idp);
    return await snapshot(cli.db);
  } finally {
    await cli.close();
  }
}

async function expectRestored(
  restoredEnv: Record<string, string>,
  before: Awaited<ReturnType<typeof snapshot>>,
) {
  // Not migrated on opening: `idp migrate` must find nothing to apply on the restored database.
  const cli = await sharedInProcessCli(restoredEnv, { migrate: false });
  try {
    expect(await snapshot(cli.db)).toEqual(before);
    expect(succeeded(await cli.idp(['migrate', '--json']))).toEqual({ applied: [] });
    expect(succeeded(await cli.idp(['wallet', 'verify', '--json']))).toMatchObject({
      ok: true,
      wallets_checked: 1,
    });
  } finally {
    await cli.close();
  }
}

describe.runIf(usingPostgres)('PostgreSQL backup and restore (docs/operating.md)', () => {
  it('pg_dump of a filled database restores every row into an empty one', async () => {
    const source = await createEmptyPostgresDatabase();
    const target = await createEmptyPostgresDatabase();
    try {
      const sourceEnv = childEnv({ DATABASE_URL: source.url, LOG_LEVEL: 'warn' });
      const targetEnv = childEnv({ DATABASE_URL: target.url, LOG_LEVEL: 'warn' });
      const before = await filled(sourceEnv);
      expect(before.counts.audit_events).toBeGreaterThan(0);

      shell(block('postgres-dump'), work, sourceEnv);
      // The restore block, with its CLI commands run from the project (where `npx idp` resolves).
      const restore = block('postgres-restore').replaceAll('idp.dump', path.join(work, 'idp.dump'));
      shell(restore, projectRoot, targetEnv);
      await expectRestored(targetEnv, before);
    } finally {
      await Promise.all([source.drop(), target.drop()]);
    }
  }, 120_000);
});

describe.skipIf(usingPostgres)('embedded database backup (docs/operating.md)', () => {
  it('a copy of the stopped DATA_DIR is a working database with every row', async () => {
    const env = childEnv({ DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'warn' });
    const before = await filled(env);

    shell(block('pglite'), work, env);
    const copy = (await readdir(work)).find((name) => name.startsWith('idp-data-'));
    expect(copy).toMatch(/^idp-data-\d{4}-\d{2}-\d{2}$/);
    await expectRestored(childEnv({ DATA_DIR: path.join(work, copy as string), LOG_LEVEL: 'warn' }), before);
  }, 120_000);
});
