import { stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.js';
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
 * The operator CLI of CONTRACT.md §2 against the database the environment selects: a fresh PGlite
 * DATA_DIR, or with TEST_DATABASE_URL a fresh PostgreSQL database. The commands run in process
 * through the CLI's own parsing and execution (test/helpers/cli-in-process.ts) on that database;
 * the real `node bin/idp.js` and `node bin/server.js` run only for what a process does: its exit
 * status, the data directory's lock, and commands handed to a running server. Tests run in order
 * and build on each other's data.
 */

const TIMEOUT = 60_000;
const COOKIE_SECRET = 'a-production-cookie-secret-of-enough-length-0123456789';

let dataDir = '';
let database: Awaited<ReturnType<typeof cliDatabase>> | undefined;
/** The environment of every child: the database of this file and nothing inherited beyond PATH/HOME. */
let env: Record<string, string> = {};
/** The CLI in this process, on the same database, until the server section hands it to the server. */
let cli: SharedCli | undefined;

beforeAll(async () => {
  database = await cliDatabase('idp-cli-test-', {}, { empty: true });
  env = database.env;
  dataDir = database.dataDir;
  // On PostgreSQL the empty database; on PGlite a copy of the migrated template, emptied below.
  cli = await sharedInProcessCli(env, { fromTemplate: true });
  if (!usingPostgres) {
    // A database no migration has touched, without the seconds of CPU that initdb of an empty
    // data directory costs: the migrations make everything they need inside this schema.
    await sql`drop schema public cascade`.execute(cli.db);
    await sql`create schema public`.execute(cli.db);
  }
});

afterAll(async () => {
  await stopAllChildren();
  await cli?.close();
  await database?.drop();
});

/** A command run in this process while it holds the database. */
function idp(args: readonly string[], stdin?: string): Promise<ProcessResult> {
  if (!cli) throw new Error('the in-process CLI has handed the database over');
  return cli.idp(args, stdin);
}

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

/** `clients create` with one redirect URI. */
function clientWithRedirect(uri: string, siteUrl = 'https://shop.example'): string[] {
  return ['clients', 'create', '--name', 'Bad', '--site-url', siteUrl, '--redirect-uri', uri, '--json'];
}

const CLIENT_ID = /^pk_[A-Za-z0-9_-]{22,}$/;
const CLIENT_SECRET = /^sk_[A-Za-z0-9_-]{43,}$/;

let shopClientId = '';
let serverClientId = '';

describe(`idp CLI on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}, no server running`, () => {
  it('migrate --json applies every migration the first time, then none', { timeout: TIMEOUT }, async () => {
    expect(succeeded(await idp(['migrate', '--json']))).toEqual({ applied: Object.keys(migrations) });
    expect(succeeded(await idp(['migrate', '--json']))).toEqual({ applied: [] });
  });

  it('refuses a malformed argument before opening any database: no data directory is made', {
    timeout: TIMEOUT,
  }, async () => {
    const never = path.join(os.tmpdir(), `idp-never-made-${process.pid}-${Date.now()}`);
    const noDatabase = childEnv({ DATA_DIR: never });
    // Real processes: what bin/idp.js does before it opens a database is the point here.
    failed(
      await runIdp(['wallet', 'credit', 'alice', '0x10'], { env: noDatabase }),
      /AMOUNT must be a number/,
    );
    failed(
      await runIdp(['premium', 'grant', 'alice', '--period', 'week', '--days', '3'], { env: noDatabase }),
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

  it('users create --json prints exactly {id, username}', { timeout: TIMEOUT }, async () => {
    const result = await idp([
      'users',
      'create',
      '--username',
      'alice',
      '--password',
      'correct horse battery',
      '--email',
      'a@example.com',
      '--email-verified',
      '--display-name',
      'Alice A',
      '--verification-level',
      '2',
      '--json',
    ]);
    const user = succeeded(result);
    expect(Object.keys(user).sort()).toEqual(['id', 'username']);
    expect(user).toEqual({ id: expect.any(Number), username: 'alice' });
    expect(Number.isInteger(user.id)).toBe(true);
  });

  it('refuses a username that differs from an existing one only in case', { timeout: TIMEOUT }, async () => {
    const result = await idp([
      'users',
      'create',
      '--username',
      'ALICE',
      '--password',
      'another password',
      '--json',
    ]);
    failed(result, /already taken/);
  });

  it('users create --password-stdin reads the password from stdin', { timeout: TIMEOUT }, async () => {
    const user = succeeded(
      await idp(['users', 'create', '--username', 'bob', '--password-stdin', '--json'], 'stdin password 1\n'),
    );
    expect(user).toEqual({ id: expect.any(Number), username: 'bob' });
  });

  it('refuses a bad username, a short password and a bad verification level', {
    timeout: TIMEOUT,
  }, async () => {
    failed(
      await idp([
        'users',
        'create',
        '--username',
        'bad name!',
        '--password',
        'long enough password',
        '--json',
      ]),
      /username must be 3-32 characters/,
    );
    failed(
      await idp(['users', 'create', '--username', 'shorty', '--password', 'short', '--json']),
      /password must be at least 8 characters/,
    );
    failed(
      await idp([
        'users',
        'create',
        '--username',
        'levelled',
        '--password',
        'long enough password',
        '--verification-level',
        '3',
        '--json',
      ]),
      /verification level must be 0, 1 or 2/,
    );
  });

  it('clients create --json prints the client with its secret, shown once', {
    timeout: TIMEOUT,
  }, async () => {
    const client = succeeded(await idp(shop));
    expect(client).toMatchObject({
      client_id: expect.stringMatching(CLIENT_ID),
      client_secret: expect.stringMatching(CLIENT_SECRET),
      name: 'Shop',
      site_url: 'https://shop.example',
      redirect_uris: ['https://shop.example/cb', 'http://127.0.0.1:8080/cb'],
      wallet: true,
      official_mobile: false,
    });
    expect(client).not.toHaveProperty('secret_hash');
    shopClientId = String(client.client_id);
  });

  it('refuses redirect URIs: plain http off loopback, a fragment, a custom scheme for an https site', {
    timeout: TIMEOUT,
  }, async () => {
    failed(await idp(clientWithRedirect('http://shop.example/cb')), /must use https/);
    failed(await idp(clientWithRedirect('https://shop.example/cb#frag')), /fragment/);
    failed(await idp(clientWithRedirect('com.shop.app:/cb')), /custom scheme/);
  });

  it('clients list --json lists the clients, never a secret or its hash', { timeout: TIMEOUT }, async () => {
    const result = await idp(['clients', 'list', '--json']);
    const listing = succeeded(result);
    expect(Object.keys(listing)).toEqual(['clients']);
    expect(listing.clients).toEqual([
      expect.objectContaining({
        client_id: shopClientId,
        name: 'Shop',
        wallet: true,
        official_mobile: false,
      }),
    ]);
    expect(result.stdout).not.toContain('client_secret');
    expect(result.stdout).not.toContain('secret_hash');
    expect(result.stdout).not.toContain('sk_');
  });

  it('status set maintenance --json prints the platform status object', { timeout: TIMEOUT }, async () => {
    const status = succeeded(await idp(['status', 'set', 'maintenance', '--message', 'Upgrading', '--json']));
    expect(Object.keys(status).sort()).toEqual([
      'incidents',
      'message',
      'ok',
      'services',
      'status',
      'updated_at',
    ]);
    expect(status).toMatchObject({ ok: true, status: 'maintenance', message: 'Upgrading', incidents: [] });
    expect(status.services).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'api' })]));
    expect(Number.isNaN(Date.parse(String(status.updated_at)))).toBe(false);
  });

  it('status set with an unknown status fails', { timeout: TIMEOUT }, async () => {
    failed(await idp(['status', 'set', 'broken', '--json']), /operational, degraded, maintenance/);
  });

  it('incidents open and resolve print the incident; an unknown id fails', { timeout: TIMEOUT }, async () => {
    const opened = succeeded(
      await idp(['incidents', 'open', '--title', 'Login slow', '--severity', 'major', '--json']),
    );
    expect(Object.keys(opened).sort()).toEqual(
      ['id', 'message', 'resolved_at', 'severity', 'started_at', 'status', 'title'].sort(),
    );
    expect(opened).toMatchObject({
      id: expect.any(Number),
      title: 'Login slow',
      message: null,
      severity: 'major',
      status: 'open',
      resolved_at: null,
    });
    expect(Number.isNaN(Date.parse(String(opened.started_at)))).toBe(false);

    const resolved = succeeded(await idp(['incidents', 'resolve', String(opened.id), '--json']));
    expect(resolved).toMatchObject({ id: opened.id, title: 'Login slow', status: 'resolved' });
    expect(Number.isNaN(Date.parse(String(resolved.resolved_at)))).toBe(false);

    failed(await idp(['incidents', 'resolve', '987654', '--json']), /no incident with id 987654/);
  });

  it('usage mistakes exit 1 with a usage line on stderr; --help exits 0', { timeout: TIMEOUT }, async () => {
    failed(await idp(['frobnicate', '--json']), /unknown command "frobnicate"[\s\S]*^usage: idp /m);
    failed(
      await idp(['users', 'create', '--username', 'carol', '--password', 'long enough password', '--bogus']),
      /Unknown option '--bogus'[\s\S]*^usage: idp users create /m,
    );
    failed(
      await idp(['incidents', 'open', '--json']),
      /--title is required[\s\S]*^usage: idp incidents open /m,
    );

    const help = await idp(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: idp <command>/m);
    expect(help.stdout).toContain('idp users create');
    expect(help.stderr).toBe('');
  });
});

describe(`idp CLI on ${usingPostgres ? 'PostgreSQL' : 'PGlite'} while the server runs`, () => {
  let server: RunningServer | undefined;
  const socketPath = () => path.join(dataDir, 'idp.sock');

  beforeAll(async () => {
    // From here on the database is the server's: this process lets go of it and of its lock.
    await cli?.close();
    cli = undefined;
    // A real server: commands handed to it over its control socket, its lock, its exit on SIGTERM.
    server = await startServer({ env: { ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' } });
  }, TIMEOUT);

  afterAll(async () => {
    await server?.stop();
  });

  function running(): RunningServer {
    if (!server) throw new Error('the server did not start');
    return server;
  }

  it('clients create works through the running server', { timeout: TIMEOUT }, async () => {
    // A real process: on PGlite it finds the directory locked and hands the command to the server.
    const client = succeeded(await spawnIdp([...shop.slice(0, 3), 'Server Shop', ...shop.slice(4)]));
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
    // A real process, so that the server is the one that has to see the change.
    const opened = succeeded(
      await spawnIdp([
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
    // A real process: its stdin is read there and handed to the server with the command.
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
