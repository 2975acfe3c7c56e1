import { stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendControlRequest } from '../../src/cli/control-socket.js';
import { prepareCommand } from '../../src/cli/run-command.js';
import { verifyPassword } from '../../src/lib/password.js';
import {
  childEnv,
  cliDatabase,
  failed,
  type ProcessResult,
  type RunningServer,
  runIdp,
  runNode,
  startServer,
  stopAllChildren,
  succeeded,
  withCliDatabase,
} from '../helpers/cli.js';
import { type SharedCli, sharedInProcessCli } from '../helpers/cli-in-process.js';
import { createEmptyPostgresDatabase, usingPostgres } from '../helpers/database.js';

/*
 * The operator CLI of docs/operating.md as the real `node bin/idp.js` and `node bin/server.js` child
 * processes, for what only a process shows: its exit status and what it does before it opens a
 * database, the data directory's lock, and commands handed to a running server (on PGlite over its
 * control socket). The database is the one the environment selects: a fresh PGlite DATA_DIR, or
 * with TEST_DATABASE_URL a fresh PostgreSQL database. The commands themselves are tested in process
 * (test/cli/commands.test.ts and the other files here). Tests run in order and build on each
 * other's data.
 */

const TIMEOUT = 60_000;
const COOKIE_SECRET = 'a-production-cookie-secret-of-enough-length-0123456789';

let dataDir = '';
let database: Awaited<ReturnType<typeof cliDatabase>> | undefined;
/** The environment of every child: the database of this file and nothing inherited beyond PATH/HOME. */
let env: Record<string, string> = {};

beforeAll(async () => {
  // An empty DATA_DIR, filled from the migrated template when first opened (no initdb).
  database = await cliDatabase('idp-cli-test-', {}, { empty: true });
  env = database.env;
  dataDir = database.dataDir;
});

afterAll(async () => {
  await stopAllChildren();
  await database?.drop();
});

/** The real `node bin/idp.js` on this file's database. */
function spawnIdp(args: readonly string[], stdin?: string): Promise<ProcessResult> {
  return runIdp(args, { env, stdin });
}

const shop = [
  'clients',
  'create',
  '--name',
  'Shop',
  '--site-url',
  'https://shop.example',
  '--redirect-uri',
  'https://shop.example/cb',
  '--redirect-uri',
  'http://127.0.0.1:8080/cb',
  '--wallet',
  '--json',
];

const CLIENT_ID = /^pk_[A-Za-z0-9_-]{22,}$/;
const CLIENT_SECRET = /^sk_[A-Za-z0-9_-]{43,}$/;

let shopClientId = '';
let serverClientId = '';

describe('idp, the real process, before any database', () => {
  it('refuses a malformed argument before opening any database: no data directory is made', {
    timeout: TIMEOUT,
  }, async () => {
    const never = path.join(os.tmpdir(), `idp-never-made-${process.pid}-${Date.now()}`);
    const noDatabase = childEnv({ DATA_DIR: never });
    // A real process: what bin/idp.js does before it opens a database is the point here.
    failed(
      await runIdp(['wallet', 'credit', 'alice', '0x10'], { env: noDatabase }),
      /AMOUNT must be a number/,
    );
    // The same check of another command, in process: what prepareCommand refuses, bin/idp.js
    // prints before it reads its configuration or opens a database.
    const premium = prepareCommand(['premium', 'grant', 'alice', '--period', 'week', '--days', '3']);
    if (!('exitCode' in premium)) throw new Error('the premium grant was not refused');
    failed(
      { code: premium.exitCode, signal: null, stdout: premium.stdout, stderr: premium.stderr },
      /--period must be month or year/,
    );
    await expect(stat(never)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses demo when NODE_ENV=production, before the database is touched', {
    timeout: TIMEOUT,
  }, async () => {
    // A real process on a database of its own that nothing has touched yet: bin/idp.js must refuse
    // before it opens (and, on PGlite, creates) the database.
    const production = { NODE_ENV: 'production', COOKIE_SECRET };
    const demoRefused =
      /demo is refused when NODE_ENV=production: it creates a user whose password is published/;
    if (usingPostgres) {
      const untouched = await createEmptyPostgresDatabase();
      try {
        const untouchedEnv = childEnv({ DATABASE_URL: untouched.url, ...production });
        failed(await runIdp(['demo', '--json'], { env: untouchedEnv }), demoRefused);
        // Not even opened: no table was migrated.
        const clientsTable = await withCliDatabase(
          untouchedEnv,
          async (db) =>
            (await sql<{ table: string | null }>`select to_regclass('clients')::text as table`.execute(db))
              .rows[0],
        );
        expect(clientsTable?.table).toBeNull();
      } finally {
        await untouched.drop();
      }
    } else {
      const never = path.join(os.tmpdir(), `idp-never-made-demo-${process.pid}-${Date.now()}`);
      failed(
        await runIdp(['demo', '--json'], { env: childEnv({ DATA_DIR: never, ...production }) }),
        demoRefused,
      );
      // Not even opened: no embedded database was created.
      await expect(stat(never)).rejects.toMatchObject({ code: 'ENOENT' });
    }
  });
});

describe(`idp CLI on ${usingPostgres ? 'PostgreSQL' : 'PGlite'} while the server runs`, () => {
  let server: RunningServer | undefined;
  const socketPath = () => path.join(dataDir, 'idp.sock');

  /** On PostgreSQL, the in-process CLI on the database the server serves too. */
  let direct: SharedCli | undefined;

  beforeAll(async () => {
    // What the server finds: made in direct mode, here in process on the same database, which
    // this process then lets go of (on PGlite with its lock) for the server.
    const cli = await sharedInProcessCli(env, { fromTemplate: true });
    try {
      shopClientId = String(succeeded(await cli.idp(shop)).client_id);
      succeeded(
        await cli.idp(
          ['users', 'create', '--username', 'bob', '--password-stdin', '--json'],
          'stdin password 1\n',
        ),
      );
      succeeded(await cli.idp(['status', 'set', 'maintenance', '--message', 'Upgrading', '--json']));
    } finally {
      if (usingPostgres) direct = cli;
      else await cli.close();
    }
    // A real server: commands handed to it over its control socket, its lock, its exit on SIGTERM.
    server = await startServer({ env: { ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' } });
  }, 2 * TIMEOUT);

  afterAll(async () => {
    await server?.stop();
    await direct?.close();
  });

  /**
   * A command as bin/idp.js runs it while the server runs: on PGlite handed to the server over its
   * control socket, here from this process (one test below spawns the process that does it); on
   * PostgreSQL run directly on the database, here in process.
   */
  async function throughServer(args: readonly string[]): Promise<ProcessResult> {
    if (direct) return direct.idp(args);
    // The socket may open a moment after the server logs that it listens: bin/idp.js asks again
    // every 200 ms too.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const output = await sendControlRequest(socketPath(), { argv: [...args] });
      if (output)
        return { code: output.exitCode, signal: null, stdout: output.stdout, stderr: output.stderr };
      if (Date.now() > deadline) throw new Error('no server answers on the control socket');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  function running(): RunningServer {
    if (!server) throw new Error('the server did not start');
    return server;
  }

  it('clients create works through the running server', { timeout: TIMEOUT }, async () => {
    const client = succeeded(await throughServer([...shop.slice(0, 3), 'Server Shop', ...shop.slice(4)]));
    expect(client).toMatchObject({
      client_id: expect.stringMatching(CLIENT_ID),
      client_secret: expect.stringMatching(CLIENT_SECRET),
      name: 'Server Shop',
      wallet: true,
      official_mobile: false,
    });
    serverClientId = String(client.client_id);
  });

  it.skipIf(usingPostgres)(
    'the server listens on DATA_DIR/idp.sock, readable by its owner only',
    async () => {
      const socket = await stat(socketPath());
      expect(socket.isSocket()).toBe(true);
      expect(socket.mode & 0o777).toBe(0o600);
    },
  );

  it('an incident opened through the CLI shows at the server /api/v1/platform/status', {
    timeout: TIMEOUT,
  }, async () => {
    const opened = succeeded(
      await throughServer([
        'incidents',
        'open',
        '--title',
        'Sign-in errors',
        '--message',
        'Investigating',
        '--json',
      ]),
    );
    expect(opened).toMatchObject({ title: 'Sign-in errors', severity: 'minor', status: 'open' });

    const response = await fetch(`${running().url}/api/v1/platform/status`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      status: string;
      message: string;
      incidents: Array<{ id: unknown }>;
    };
    // Set in direct mode before the server started: the server reads the same database.
    expect(body).toMatchObject({ status: 'maintenance', message: 'Upgrading' });
    expect(body.incidents).toEqual([
      expect.objectContaining({ id: opened.id, title: 'Sign-in errors', status: 'open', resolved_at: null }),
    ]);
  });

  it('users create --password-stdin works through the running server', { timeout: TIMEOUT }, async () => {
    // A real process: on PGlite it finds the directory locked and hands the command, with the
    // stdin it read, to the server.
    const user = succeeded(
      await spawnIdp(
        ['users', 'create', '--username', 'carol', '--password-stdin', '--json'],
        'stdin password 2\n',
      ),
    );
    expect(user).toEqual({ id: expect.any(Number), username: 'carol' });
  });

  it('demo is refused when NODE_ENV=production even when a server answers on the socket', {
    timeout: TIMEOUT,
  }, async () => {
    // A real process: its own production check comes before it looks for a server to hand it to.
    failed(
      await runIdp(['demo', '--json'], { env: { ...env, NODE_ENV: 'production', COOKIE_SECRET } }),
      /refused when NODE_ENV=production/,
    );
  });

  it.skipIf(usingPostgres)(
    'a second server on the same DATA_DIR refuses to start, naming DATA_DIR',
    {
      timeout: TIMEOUT,
    },
    async () => {
      // A real process: the data directory's lock is between processes.
      const second = await runNode('bin/server.js', [], {
        env: { ...env, PORT: '0', HOST: '127.0.0.1', PUBLIC_URL: 'http://127.0.0.1:9' },
        timeoutMs: 20_000,
      });
      expect(second.signal, 'the second server was still running after 20 s').toBeNull();
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain('DATA_DIR');
      expect(second.stderr).toContain(dataDir);
      // The first server is unharmed.
      expect((await fetch(`${running().url}/health/live`)).status).toBe(200);
    },
  );

  it('SIGTERM stops the server with exit code 0', { timeout: TIMEOUT }, async () => {
    const { code, signal } = await running().stop();
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    server = undefined;
    if (!usingPostgres) await expect(stat(socketPath())).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('after the server stops, the CLI works directly on the same data', { timeout: TIMEOUT }, async () => {
    // A real process: the stopped server released the lock, and the CLI opens the directory itself.
    const listing = succeeded(await spawnIdp(['clients', 'list', '--json']));
    const clients = listing.clients as Array<{ client_id: string }>;
    expect(clients.map((client) => client.client_id).sort()).toEqual([shopClientId, serverClientId].sort());
  });

  it('stores the passwords read from stdin, without the trailing newline', { timeout: TIMEOUT }, async () => {
    await withCliDatabase(env, async (db) => {
      const rows = await db
        .selectFrom('users')
        .select(['username', 'password_hash'])
        .where('username', 'in', ['bob', 'carol'])
        .orderBy('username')
        .execute();
      expect(rows.map((row) => row.username)).toEqual(['bob', 'carol']);
      const [bob, carol] = rows;
      expect(await verifyPassword(bob?.password_hash, 'stdin password 1')).toBe(true);
      expect(await verifyPassword(carol?.password_hash, 'stdin password 2')).toBe(true);
      expect(await verifyPassword(carol?.password_hash, 'stdin password 2\n')).toBe(false);
    });
  });
});
