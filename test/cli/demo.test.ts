import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoResult } from '../../src/cli/demo.commands.js';
import { runCommand } from '../../src/cli/run-command.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/schema.js';
import { systemClock } from '../../src/lib/clock.js';
import { hashPassword, verifyPassword } from '../../src/lib/password.js';
import { hashSecret } from '../../src/lib/secrets.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { failed, type ProcessResult, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';
import { usingPostgres } from '../helpers/database.js';

/*
 * `idp demo`: a demo client and user, created once and found again on every later run, run in
 * process through the CLI's own parsing and execution (test/helpers/cli-in-process.ts) against a
 * fresh database; the last test runs it while the application serves that database. The real
 * process (refused in production before it opens a database, and while a server answers on the
 * control socket) is test/cli/cli.test.ts's. Tests run in order and build on each other's data.
 */

const TIMEOUT = 60_000;
const COOKIE_SECRET = 'a-production-cookie-secret-of-enough-length-0123456789';
/** The issuer the CLI prints comes from PUBLIC_URL: the same in the CLI and the application here. */
const ISSUER = 'http://127.0.0.1:4111';

let cli: InProcessCli | undefined;
/** The application on the CLI's database, in the last test. */
let server: TestApp | undefined;

/** What `idp demo --json` prints. */
type DemoOutput = DemoResult;

let first: DemoOutput;

beforeAll(async () => {
  cli = await inProcessCli({ PUBLIC_URL: ISSUER });
});

afterAll(async () => {
  // The application's close drops the database it was given.
  await (server ? server.close() : cli?.database.drop());
});

function database(): Kysely<Database> {
  if (!cli) throw new Error('no CLI');
  return cli.database.db;
}

async function demo(extraEnv: Record<string, string> = {}, args: string[] = []): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.withEnv(extraEnv)(['demo', ...args, '--json']);
}

function demoOutput(result: ProcessResult): DemoOutput {
  return succeeded(result) as unknown as DemoOutput;
}

/** The state of the demo user and client, read from the database between runs. */
async function demoState() {
  const db = database();
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
  const secrets = await db.selectFrom('client_secrets').selectAll().orderBy('id').execute();
  const audit = await db
    .selectFrom('audit_events')
    .select(['actor', 'action', 'subject', 'details'])
    .orderBy('id')
    .execute();
  return { user, balance: balance ? Number(balance.balance) : null, clients, secrets, audit };
}

/** What the token endpoint says to these client credentials with a made-up code. */
async function tokenEndpointAnswer(clientId: string, clientSecret: string): Promise<number> {
  if (!server) throw new Error('the application did not start');
  const response = await server.app.inject({
    method: 'POST',
    url: '/api/v1/oauth/token',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      code: 'ac_not-a-real-code',
      redirect_uri: 'http://localhost:4000/callback',
    }).toString(),
  });
  const body = response.json() as { error?: string };
  // Credentials that work get as far as the code: invalid_grant. Others: invalid_client.
  expect(body.error).toBe(response.statusCode === 401 ? 'invalid_client' : 'invalid_grant');
  return response.statusCode;
}

describe(`idp demo on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('is refused by a server in production that runs it for the CLI', async () => {
    const config = loadConfig({ NODE_ENV: 'production', COOKIE_SECRET });
    // No database at all: the refusal comes before any query.
    const output = await runCommand(['demo', '--json'], {
      db: undefined as unknown as Kysely<Database>,
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
      issuer: ISSUER,
      discovery_url: `${ISSUER}/.well-known/openid-configuration`,
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
    expect(state.secrets).toHaveLength(1);
    expect(state.secrets[0]?.secret_hash).toBe(hashSecret(first.client.client_secret));
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
    const db = database();
    await db
      .updateTable('users')
      .set({ password_hash: otherHash, disabled_at: new Date() })
      .where('username', '=', 'demo')
      .execute();
    await db.updateTable('clients').set({ disabled_at: new Date(), wallet: false }).execute();

    const again = demoOutput(await demo());
    expect(again.client.client_id).toBe(first.client.client_id);
    expect(again.client.client_secret).toMatch(/^sk_/);
    expect(again.client.client_secret).not.toBe(first.client.client_secret);
    expect(again.client).toMatchObject({ wallet: true, created: false });
    expect(again.user).toMatchObject({ id: first.user.id, username: 'demo', created: false });

    const state = await demoState();
    expect(state.clients).toHaveLength(1);
    expect(state.clients[0]).toMatchObject({ disabled_at: null, wallet: true });
    // The new secret alone has no expiry: the one before stopped working at the rerun.
    expect(state.secrets.filter((s) => s.expires_at === null).map((s) => s.secret_hash)).toEqual([
      hashSecret(again.client.client_secret),
    ]);
    expect(state.user.disabled_at).toBeNull();
    expect(await verifyPassword(state.user.password_hash, 'demo-password')).toBe(true);
    expect(state.balance).toBe(100 * 100);
  });

  it("follows the example site to another port (--site-port, npm run dev's EXAMPLE_PORT): the same client", {
    timeout: TIMEOUT,
  }, async () => {
    // A callback someone added by hand stays; the demo's callbacks follow the port.
    const db = database();
    await db
      .updateTable('clients')
      .set({ redirect_uris: [...first.client.redirect_uris, 'https://mine.example/callback'] })
      .execute();
    const moved = demoOutput(await demo({}, ['--site-port', '4100']));
    expect(moved.client).toMatchObject({
      client_id: first.client.client_id,
      created: false,
      site_url: 'http://localhost:4100',
      redirect_uris: [
        'http://localhost:4100/callback',
        'http://127.0.0.1:4100/callback',
        'https://mine.example/callback',
      ],
    });
    // Found again from the new port, and back at the default when the option is left out.
    const back = demoOutput(await demo());
    expect(back.client).toMatchObject({
      client_id: first.client.client_id,
      site_url: 'http://localhost:4000',
      redirect_uris: [
        'http://localhost:4000/callback',
        'http://127.0.0.1:4000/callback',
        'https://mine.example/callback',
      ],
    });
    const state = await demoState();
    expect(state.clients).toHaveLength(1);
    expect(state.clients[0]).toMatchObject({ site_url: 'http://localhost:4000' });
    await db.updateTable('clients').set({ redirect_uris: first.client.redirect_uris }).execute();

    for (const wrong of ['0', '70000', 'http']) {
      const result = await demo({}, ['--site-port', wrong]);
      failed(result, new RegExp(`--site-port must be a port from 1 to 65535, got "${wrong}"`));
    }
  });

  it('prints a short block for a person without --json', { timeout: TIMEOUT }, async () => {
    const result = await (cli as InProcessCli).idp(['demo']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`client_id      ${first.client.client_id}`);
    expect(result.stdout).toMatch(/client_secret {2}sk_/);
    expect(result.stdout).toContain('demo / demo-password');
    expect(result.stdout).toContain(`${ISSUER}/.well-known/openid-configuration`);
    expect(result.stdout).toContain('then open http://localhost:4000 and sign in');
    const moved = await (cli as InProcessCli).idp(['demo', '--site-port', '4100']);
    expect(moved.stdout).toContain('then open http://localhost:4100 and sign in');
    expect(moved.stdout).toContain(
      'redirect URIs  http://localhost:4100/callback, http://127.0.0.1:4100/callback',
    );
    await (cli as InProcessCli).idp(['demo']);
  });

  it('works while the application serves the database; the previous secret stops working', {
    timeout: TIMEOUT,
  }, async () => {
    // The whole application on the CLI's database, on the system clock as a server runs. Handing
    // the command to a running server over its control socket is test/cli/cli.test.ts's.
    server = await createTestApp({
      database: cli?.database,
      clock: systemClock,
      env: { PUBLIC_URL: ISSUER },
    });
    const one = demoOutput(await demo());
    // The application's client cache has seen the change, as a server's does from the database.
    await server.sync();
    expect(one.client.client_id).toBe(first.client.client_id);
    expect(one.user.id).toBe(first.user.id);
    expect(await tokenEndpointAnswer(one.client.client_id, one.client.client_secret)).toBe(400);

    const two = demoOutput(await demo());
    await server.sync();
    expect(two.client.client_id).toBe(first.client.client_id);
    expect(two.client.client_secret).not.toBe(one.client.client_secret);
    expect(await tokenEndpointAnswer(two.client.client_id, one.client.client_secret)).toBe(401);
    expect(await tokenEndpointAnswer(two.client.client_id, two.client.client_secret)).toBe(400);

    // The production check also holds for a command the server runs for the CLI.
    failed(await demo({ NODE_ENV: 'production', COOKIE_SECRET }), /refused when NODE_ENV=production/);

    // Never a second client or user.
    const state = await demoState();
    expect(state.clients).toHaveLength(1);
    expect(state.user.id).toBe(first.user.id);
  });
});
