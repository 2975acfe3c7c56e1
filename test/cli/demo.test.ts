import { readdir } from 'node:fs/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoResult } from '../../src/cli/demo.commands.js';
import { runCommand } from '../../src/cli/run-command.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/schema.js';
import { systemClock } from '../../src/lib/clock.js';
import { hashPassword, verifyPassword } from '../../src/lib/password.js';
import {
  cliDatabase,
  failed,
  type ProcessResult,
  runIdp,
  startServer,
  stopAllChildren,
  succeeded,
  withCliDatabase,
} from '../helpers/cli.js';
import { usingPostgres } from '../helpers/database.js';
import { freePort } from '../helpers/tcp-proxy.js';

/*
 * `idp demo`: a demo client and user, created once and found again on every later run, run as the
 * real `node bin/idp.js` against a fresh database; the last test runs it while a server holds the
 * database (on PGlite through the server's control socket). Tests run in order and build on each
 * other's data.
 */

const TIMEOUT = 60_000;
const COOKIE_SECRET = 'a-production-cookie-secret-of-enough-length-0123456789';

let database: Awaited<ReturnType<typeof cliDatabase>> | undefined;
let env: Record<string, string> = {};
let port = 0;

/** What `idp demo --json` prints. */
type DemoOutput = DemoResult;

let first: DemoOutput;

beforeAll(async () => {
  port = await freePort();
  // The issuer the CLI prints comes from PUBLIC_URL: the same in the CLI and the server here.
  database = await cliDatabase('idp-cli-demo-', {
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
  });
  env = database.env;
});

afterAll(async () => {
  await stopAllChildren();
  await database?.drop();
});

async function demo(extraEnv: Record<string, string> = {}): Promise<ProcessResult> {
  return runIdp(['demo', '--json'], { env: { ...env, ...extraEnv } });
}

function demoOutput(result: ProcessResult): DemoOutput {
  return succeeded(result) as unknown as DemoOutput;
}

/** The state of the demo user and client, read from the database between runs. */
async function demoState() {
  return withCliDatabase(env, async (db) => {
    const user = await db
      .selectFrom('users')
      .selectAll()
      .where('username', '=', 'demo')
      .executeTakeFirstOrThrow();
    const balance = await db
      .selectFrom('wallets')
      .select('balance')
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    const clients = await db.selectFrom('clients').selectAll().execute();
    const audit = await db
      .selectFrom('audit_events')
      .select(['actor', 'action', 'subject', 'details'])
      .orderBy('id')
      .execute();
    return { user, balance: balance ? Number(balance.balance) : null, clients, audit };
  });
}

/** What the token endpoint says to these client credentials with a made-up code. */
async function tokenEndpointAnswer(clientId: string, clientSecret: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: 'ac_not-a-real-code',
      redirect_uri: 'http://localhost:4000/callback',
    }),
  });
  const body = (await response.json()) as { error?: string };
  // Credentials that work get as far as the code: invalid_grant. Others: invalid_client.
  expect(body.error).toBe(response.status === 401 ? 'invalid_client' : 'invalid_grant');
  return response.status;
}

describe('idp demo', () => {
  it('is refused when NODE_ENV=production, before the database is touched', {
    timeout: TIMEOUT,
  }, async () => {
    // On a database of its own that nothing has touched yet.
    const untouched = await cliDatabase('idp-cli-demo-refused-', {}, { empty: true });
    try {
      failed(
        await runIdp(['demo', '--json'], {
          env: { ...untouched.env, NODE_ENV: 'production', COOKIE_SECRET },
        }),
        /demo is refused when NODE_ENV=production: it creates a user whose password is published/,
      );
      // Not even opened: no embedded database was created, no table was migrated.
      if (untouched.dataDir) {
        expect(await readdir(untouched.dataDir)).toEqual([]);
      } else {
        const clientsTable = await withCliDatabase(
          untouched.env,
          async (db) =>
            (await sql<{ table: string | null }>`select to_regclass('clients')::text as table`.execute(db))
              .rows[0],
        );
        expect(clientsTable?.table).toBeNull();
      }
    } finally {
      await untouched.drop();
    }
  });

  it('is refused by a server in production that runs it for the CLI', async () => {
    const config = loadConfig({ NODE_ENV: 'production', COOKIE_SECRET });
    // No database at all: the refusal comes before any query.
    const output = await runCommand(['demo', '--json'], {
      db: undefined as unknown as import('kysely').Kysely<Database>,
      config,
      clock: systemClock,
    });
    expect(output).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: expect.stringMatching(/^idp: demo is refused when NODE_ENV=production/),
    });
  });

  it('creates a demo client with the wallet right and a demo user with coins', {
    timeout: TIMEOUT,
  }, async () => {
    first = demoOutput(await demo());
    expect(first).toEqual({
      issuer: `http://127.0.0.1:${port}`,
      discovery_url: `http://127.0.0.1:${port}/.well-known/openid-configuration`,
      client: {
        client_id: expect.stringMatching(/^pk_[A-Za-z0-9_-]{22}$/),
        client_secret: expect.stringMatching(/^sk_[A-Za-z0-9_-]{43}$/),
        name: 'Demo site',
        site_url: 'http://localhost:4000',
        redirect_uris: ['http://localhost:4000/callback', 'http://127.0.0.1:4000/callback'],
        wallet: true,
        created: true,
      },
      user: {
        id: expect.any(Number),
        username: 'demo',
        password: 'demo-password',
        email: 'demo@example.com',
        display_name: 'Demo User',
        created: true,
      },
    });
    const state = await demoState();
    expect(state.user.email_verified).toBe(true);
    expect(await verifyPassword(state.user.password_hash, 'demo-password')).toBe(true);
    expect(state.balance).toBe(100 * 100); // hundredths
    expect(state.clients).toHaveLength(1);
    expect(state.clients[0]?.secret_hash).not.toContain(first.client.client_secret);
    // The operator's events, as `idp clients create` and `idp wallet credit` record them.
    expect(state.audit).toEqual([
      {
        actor: 'operator',
        action: 'client_created',
        subject: `client:${first.client.client_id}`,
        details: { demo: true },
      },
      {
        actor: 'operator',
        action: 'wallet_credited',
        subject: 'username:demo',
        details: { demo: true, transaction: expect.stringMatching(/^tx_/), amount: 100 },
      },
    ]);
  });

  it('finds the same client and user again: a new secret, the password reset, no second credit', {
    timeout: TIMEOUT,
  }, async () => {
    // Someone changed the password, disabled the user and the client, and took the wallet right.
    const otherHash = await hashPassword('someone else changed it');
    await withCliDatabase(env, async (db) => {
      await db
        .updateTable('users')
        .set({ password_hash: otherHash, disabled_at: new Date() })
        .where('username', '=', 'demo')
        .execute();
      await db.updateTable('clients').set({ disabled_at: new Date(), wallet: false }).execute();
    });

    const again = demoOutput(await demo());
    expect(again.client.client_id).toBe(first.client.client_id);
    expect(again.client.client_secret).toMatch(/^sk_/);
    expect(again.client.client_secret).not.toBe(first.client.client_secret);
    expect(again.client).toMatchObject({ wallet: true, created: false });
    expect(again.user).toMatchObject({ id: first.user.id, username: 'demo', created: false });

    const state = await demoState();
    expect(state.clients).toHaveLength(1);
    expect(state.clients[0]).toMatchObject({ disabled_at: null, wallet: true });
    expect(state.user.disabled_at).toBeNull();
    expect(await verifyPassword(state.user.password_hash, 'demo-password')).toBe(true);
    expect(state.balance).toBe(100 * 100);
  });

  it('prints a short block for a person without --json', { timeout: TIMEOUT }, async () => {
    const result = await runIdp(['demo'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`client_id      ${first.client.client_id}`);
    expect(result.stdout).toMatch(/client_secret {2}sk_/);
    expect(result.stdout).toContain('demo / demo-password');
    expect(result.stdout).toContain(`http://127.0.0.1:${port}/.well-known/openid-configuration`);
  });

  it(`works while the server runs${usingPostgres ? '' : ' (through its control socket)'}; the previous secret stops working`, {
    timeout: 2 * TIMEOUT,
  }, async () => {
    const server = await startServer({ env: { ...env, HOST: '127.0.0.1', LOG_LEVEL: 'info' } });
    try {
      const one = demoOutput(await demo());
      expect(one.client.client_id).toBe(first.client.client_id);
      expect(one.user.id).toBe(first.user.id);
      expect(await tokenEndpointAnswer(one.client.client_id, one.client.client_secret)).toBe(400);

      const two = demoOutput(await demo());
      expect(two.client.client_id).toBe(first.client.client_id);
      expect(two.client.client_secret).not.toBe(one.client.client_secret);
      expect(await tokenEndpointAnswer(two.client.client_id, one.client.client_secret)).toBe(401);
      expect(await tokenEndpointAnswer(two.client.client_id, two.client.client_secret)).toBe(400);

      // The CLI's own production check also holds when a server answers on the socket.
      failed(await demo({ NODE_ENV: 'production', COOKIE_SECRET }), /refused when NODE_ENV=production/);
    } finally {
      expect(await server.stop()).toEqual({ code: 0, signal: null });
    }
    // Through the server or not, never a second client or user.
    const state = await demoState();
    expect(state.clients).toHaveLength(1);
    expect(state.user.id).toBe(first.user.id);
  });
});
