import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childEnv,
  parseJsonOutput,
  runIdp,
  runNode,
  startServer,
  stopAllChildren,
  withCliDatabase,
} from '../helpers/cli.js';
import { createEmptyPostgresDatabase, usingPostgres } from '../helpers/database.js';
import { keepAliveLoad } from '../helpers/keep-alive-load.js';

/**
 * The real process, as `npm start` runs it: it serves, keeps its data across a restart, stops
 * cleanly on SIGTERM, and says which database it uses without ever printing its password.
 */
let env: Record<string, string>;
let expectedDatabase: string;
const cleanup: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  if (usingPostgres) {
    const database = await createEmptyPostgresDatabase();
    cleanup.push(database.drop);
    const url = new URL(database.url);
    url.password = 'not-the-real-password'; // trust auth ignores it; the log must never show it
    env = childEnv({ DATABASE_URL: url.toString() });
    expectedDatabase = `PostgreSQL at postgres://${url.username}@${url.host}${url.pathname}`;
  } else {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'idp-server-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    env = childEnv({ DATA_DIR: dataDir });
    expectedDatabase = `PGlite (embedded) at ${dataDir}`;
  }
  Object.assign(env, { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' });
});

afterAll(async () => {
  await stopAllChildren();
  for (const step of cleanup.reverse()) await step();
});

describe(`the server process on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  // The first start creates the embedded database (up to 120 s on a loaded machine: test/helpers/cli.ts),
  // the second opens it.
  it('serves, keeps its data across a restart, and stops cleanly on SIGTERM', {
    timeout: 200_000,
  }, async () => {
    const first = await startServer({ env });
    const status = await fetch(`${first.url}/api/v1/platform/status`);
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ ok: true, status: 'operational' });

    const log = first.output().stdout;
    expect(log).toContain(`"database: ${expectedDatabase}"`);
    expect(log).toContain('"msg":"migrations applied"');
    expect(log).not.toContain('not-the-real-password');

    expect(await first.stop()).toEqual({ code: 0, signal: null });
    expect(first.output().stdout).toContain('"msg":"stopped"');
    // Made at start, before any sign-in asked for one: a signing key for each id_token algorithm.
    const keys = await withCliDatabase(env, (db) =>
      db.selectFrom('signing_keys').select('algorithm').orderBy('algorithm').execute(),
    );
    expect(keys.map((key) => key.algorithm)).toEqual(['ES256', 'EdDSA', 'RS256']);

    // Written while the server is down, read by the next one.
    parseJsonOutput(await runIdp(['status', 'set', 'maintenance', '--message', 'Kept', '--json'], { env }));

    const second = await startServer({ env });
    const again = await fetch(`${second.url}/api/v1/platform/status`);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ status: 'maintenance', message: 'Kept' });
    expect(second.output().stdout).not.toContain('migrations applied'); // nothing left to apply
    expect((await fetch(`${second.url}/health/ready`)).status).toBe(200);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });

  it('stops cleanly on a SIGTERM sent the moment it listens, while it still finishes starting', {
    timeout: 120_000,
  }, async () => {
    const server = await startServer({ env }); // resolves on the "Server listening" line
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    expect(server.output().stdout).toContain('"msg":"stopped"');
  });

  it('answers every request of kept-alive connections sending through a SIGTERM, closing each with its answer', {
    timeout: 60_000,
  }, async () => {
    const server = await startServer({ env });
    const load = keepAliveLoad(server.url);
    await load.answered(40);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    const outcomes = await load.finished();
    expect(outcomes.filter((outcome) => outcome.error)).toEqual([]); // none reset or hung up on
    // Each connection ended after an answer that said so (the drain's), none under a request.
    const last = new Map(outcomes.map((outcome) => [outcome.connection, outcome]));
    expect(last.size).toBeGreaterThanOrEqual(4);
    for (const outcome of last.values()) expect(outcome.connectionHeader).toBe('close');
    // Served as ever (the status, the token endpoint's 401 for a POST without a client), none refused.
    expect(outcomes.filter((outcome) => outcome.status === 503)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.status === 200).length).toBeGreaterThan(0);
  });

  it('refuses to start on a wrong setting with one line naming it', async () => {
    const result = await runNode('bin/server.js', [], { env: { ...env, PORT: 'eighty' } });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'idp: invalid configuration: PORT must be a whole number from 0 to 65535',
    );
  });

  it('refuses insecure defaults in production', async () => {
    const result = await runNode('bin/server.js', [], {
      env: { ...env, NODE_ENV: 'production', PUBLIC_URL: 'http://id.example.com' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/COOKIE_SECRET must be set in production; PUBLIC_URL must be https/);
  });

  it('refuses a busy port with one line naming it and PORT, before it creates or opens a database', async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { port } = busy.address() as net.AddressInfo;
    const dataDir = path.join(os.tmpdir(), `idp-busy-port-${process.pid}-${port}`);
    // On PostgreSQL, a database of its own that must stay empty (the shared one is migrated above).
    const empty = usingPostgres ? await createEmptyPostgresDatabase() : undefined;
    try {
      const result = await runNode('bin/server.js', [], {
        env: {
          ...env,
          PORT: String(port),
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          ...(empty ? { DATABASE_URL: empty.url } : { DATA_DIR: dataDir }),
        },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `idp: port ${port} on 127.0.0.1 is already in use by another process. Stop that process, or set PORT to a free port (e.g. PORT=${port + 1}).\n`,
      );
      expect(result.stdout).toBe(''); // not even the "database:" line
      if (empty) {
        const tables = await withCliDatabase({ DATABASE_URL: empty.url }, (db) =>
          sql<{
            count: number;
          }>`select count(*)::int as count from pg_tables where schemaname = 'public'`.execute(db),
        );
        expect(tables.rows[0]?.count).toBe(0);
      } else {
        expect(existsSync(dataDir)).toBe(false);
      }
    } finally {
      busy.close();
      await empty?.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
