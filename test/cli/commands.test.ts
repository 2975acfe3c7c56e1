import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.js';
import { verifyPassword } from '../../src/lib/password.js';
import { failed, type ProcessResult, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';
import { usingPostgres } from '../helpers/database.js';

/*
 * The operator CLI of docs/operating.md (migrate, users create, clients create and list, status set,
 * incidents, usage mistakes), run in process through the CLI's own parsing and execution
 * (test/helpers/cli-in-process.ts) against an empty database of this file's own. What needs the
 * real `node bin/idp.js` is test/cli/cli.test.ts's. Tests run in order and build on each other's
 * data.
 */

const TIMEOUT = 60_000;

let cli: InProcessCli | undefined;

beforeAll(async () => {
  cli = await inProcessCli({}, { empty: true }); // the first migrate applies everything
});

afterAll(async () => {
  await cli?.database.drop();
});

function idp(args: readonly string[], stdin?: string): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args, stdin);
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

describe(`idp CLI on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('migrate --json applies every migration the first time, then none', { timeout: TIMEOUT }, async () => {
    expect(succeeded(await idp(['migrate', '--json']))).toEqual({ applied: Object.keys(migrations) });
    expect(succeeded(await idp(['migrate', '--json']))).toEqual({ applied: [] });
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
    const stored = await cli?.database.db
      .selectFrom('users')
      .select('password_hash')
      .where('username', '=', 'bob')
      .executeTakeFirstOrThrow();
    expect(await verifyPassword(stored?.password_hash, 'stdin password 1')).toBe(true);
    expect(await verifyPassword(stored?.password_hash, 'stdin password 1\n')).toBe(false);
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
    // The key, that is: `token_endpoint_auth_method: "client_secret_basic"` names the method only.
    expect(result.stdout).not.toContain('"client_secret"');
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
