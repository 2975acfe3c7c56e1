import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type CryptoKey, exportPKCS8, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlServer, sendControlRequest, startControlServer } from '../../src/cli/control-socket.js';
import type { Context } from '../../src/context.js';
import { systemClock } from '../../src/lib/clock.js';
import { insertLink } from '../../src/modules/upstream/links.repository.js';
import { findProviderByName } from '../../src/modules/upstream/providers.repository.js';
import { applePrivateKeyOf, clientSecretOf } from '../../src/modules/upstream/providers.service.js';
import { testConfig } from '../helpers/app.js';
import {
  cliDatabase,
  failed,
  type ProcessResult,
  runIdp,
  succeeded,
  withCliDatabase,
} from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';
import { usingPostgres } from '../helpers/database.js';

/*
 * `idp providers add|update|remove|list`: every kind added, secrets read from files where idp is
 * typed (or inline) and stored sealed, never printed; changes, removal with its links, refusals as
 * one line naming the setting, and the audit events without a secret's value.
 */
const TIMEOUT = 60_000;
const ENV = { PUBLIC_URL: 'https://id.example' };
let cli: InProcessCli | undefined;
let folder = '';
let applePem = '';

/** The settings' context of the CLI's configuration, to open what it sealed. */
const ctx = { config: testConfig(ENV), clock: systemClock } as Context;

beforeAll(async () => {
  cli = await inProcessCli(ENV);
  folder = await mkdtemp(path.join(os.tmpdir(), 'idp-providers-'));
  const key = await generateKeyPair('ES256', { extractable: true });
  applePem = await exportPKCS8(key.privateKey as CryptoKey);
  await writeFile(path.join(folder, 'AuthKey.p8'), applePem);
  // A file as an editor leaves it: the secret and a newline.
  await writeFile(path.join(folder, 'google.secret'), 'google-secret-from-file\n');
  await writeFile(
    path.join(folder, 'rsa.p8'),
    await exportPKCS8((await generateKeyPair('RS256', { extractable: true })).privateKey as CryptoKey),
  );
});
afterAll(async () => {
  await cli?.database.drop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

function idp(args: readonly string[], stdin?: string): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args, stdin);
}

const db = () => {
  if (!cli) throw new Error('no CLI');
  return cli.database.db;
};
const file = (name: string) => path.join(folder, name);
const stored = async (name: string) => {
  const provider = await findProviderByName(db(), name);
  if (!provider) throw new Error(`no provider ${name}`);
  return provider;
};
const auditOf = (name: string) =>
  db()
    .selectFrom('audit_events')
    .select(['actor', 'action', 'details'])
    .where('subject', '=', `provider:${name}`)
    .orderBy('id')
    .execute();

/** What `list --json` and `add --json` show of a provider: these keys, never a secret. */
const VIEW_KEYS = [
  'api_url',
  'callback_url',
  'client_id',
  'created_at',
  'display_name',
  'enabled',
  'issuer',
  'kind',
  'linked_accounts',
  'name',
  'scopes',
  'trust_amr',
  'updated_at',
];

/** An account linked to the provider, as a sign-in through it would link it. */
async function linkAccount(provider: string, username: string): Promise<void> {
  const user = succeeded(
    await idp([
      'users',
      'create',
      '--username',
      username,
      '--password',
      'correct horse battery staple',
      '--json',
    ]),
  );
  const { id, issuer } = await stored(provider);
  await insertLink(db(), {
    userId: Number(user.id),
    providerId: id,
    issuer,
    subject: `subject-of-${username}`,
    email: null,
    label: username,
    at: new Date(),
  });
}

describe(`idp providers on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('adds Google with its secret read from a file, sealed, and prints the callback URL to register', {
    timeout: TIMEOUT,
  }, async () => {
    const added = succeeded(
      await idp([
        'providers',
        'add',
        'google',
        '--kind',
        'google',
        '--client-id',
        '1234.apps.googleusercontent.com',
        '--client-secret-file',
        file('google.secret'),
        '--json',
      ]),
    );
    expect(Object.keys(added).sort()).toEqual(VIEW_KEYS);
    expect(added).toMatchObject({
      name: 'google',
      kind: 'google',
      display_name: 'Google',
      issuer: 'https://accounts.google.com',
      api_url: null,
      client_id: '1234.apps.googleusercontent.com',
      scopes: 'openid email profile',
      enabled: true,
      trust_amr: false,
      linked_accounts: 0,
      callback_url: 'https://id.example/signin/providers/google/callback',
    });
    const provider = await stored('google');
    expect(provider.clientSecretSealed).not.toContain('google-secret-from-file');
    expect(clientSecretOf(ctx, provider)).toBe('google-secret-from-file');
  });

  it('adds GitHub with an inline secret, its API by default, and says what to register in its listing', {
    timeout: TIMEOUT,
  }, async () => {
    const res = await idp([
      'providers',
      'add',
      'github',
      '--kind',
      'github',
      '--client-id',
      'Iv1.abc',
      '--client-secret',
      'github-inline-secret',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('api_url: https://api.github.com');
    expect(res.stdout).toContain(
      'Register this redirect URI at the provider: https://id.example/signin/providers/github/callback',
    );
    expect(res.stdout).not.toContain('github-inline-secret');
    expect(clientSecretOf(ctx, await stored('github'))).toBe('github-inline-secret');
  });

  it('adds a generic OpenID provider on loopback http, disabled, trusting its amr', {
    timeout: TIMEOUT,
  }, async () => {
    const added = succeeded(
      await idp([
        'providers',
        'add',
        'corp-sso',
        '--kind',
        'oidc',
        '--display-name',
        'Corp SSO',
        '--issuer',
        'http://127.0.0.1:9999/realms/corp',
        '--client-id',
        'idp',
        '--client-secret',
        'corp-secret',
        '--scopes',
        'openid email',
        '--disabled',
        '--trust-amr',
        '--json',
      ]),
    );
    expect(added).toMatchObject({
      kind: 'oidc',
      display_name: 'Corp SSO',
      issuer: 'http://127.0.0.1:9999/realms/corp',
      scopes: 'openid email',
      enabled: false,
      trust_amr: true,
    });
  });

  it('adds Apple with its team id, key id and .p8 key, sealed, and no client secret', {
    timeout: TIMEOUT,
  }, async () => {
    const added = succeeded(
      await idp([
        'providers',
        'add',
        'apple',
        '--kind',
        'apple',
        '--client-id',
        'com.example.web',
        '--apple-team-id',
        'TEAM123456',
        '--apple-key-id',
        'KEY1234567',
        '--apple-private-key-file',
        file('AuthKey.p8'),
        '--json',
      ]),
    );
    expect(added).toMatchObject({ kind: 'apple', display_name: 'Apple', scopes: 'openid name email' });
    const provider = await stored('apple');
    expect(provider).toMatchObject({
      appleTeamId: 'TEAM123456',
      appleKeyId: 'KEY1234567',
      clientSecretSealed: null,
    });
    expect(provider.applePrivateKeySealed).not.toContain('PRIVATE KEY');
    expect(applePrivateKeyOf(ctx, provider)).toBe(applePem.trim());
  });

  it('lists every provider with its linked accounts and callback URL, never a secret', {
    timeout: TIMEOUT,
  }, async () => {
    await linkAccount('github', 'linked_one');
    await linkAccount('github', 'linked_two');
    const listing = succeeded(await idp(['providers', 'list', '--json']));
    const list = listing.providers as Array<Record<string, unknown>>;
    expect(Object.keys(listing)).toEqual(['providers']);
    expect(list.map((each) => each.name)).toEqual(['google', 'github', 'corp-sso', 'apple']);
    for (const each of list) expect(Object.keys(each).sort()).toEqual(VIEW_KEYS);
    expect(list[1]).toMatchObject({ name: 'github', linked_accounts: 2 });

    const table = await idp(['providers', 'list']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME +KIND +DISPLAY NAME +ENABLED +TRUST AMR +LINKED +CALLBACK URL$/);
    expect(lines[2]).toMatch(
      /^github +github +GitHub +yes +no +2 +https:\/\/id\.example\/signin\/providers\/github\/callback$/,
    );
    expect(lines[3]).toMatch(/^corp-sso +oidc +Corp SSO +no +yes +0 +/);
    for (const output of [table.stdout, JSON.stringify(listing)])
      for (const secret of ['google-secret-from-file', 'github-inline-secret', 'corp-secret', 'PRIVATE KEY'])
        expect(output).not.toContain(secret);
  });

  it('changes only the settings given: a new secret from a file, disabled, its amr no longer trusted', {
    timeout: TIMEOUT,
  }, async () => {
    await writeFile(file('corp.secret'), 'corp-secret-rotated');
    const changed = succeeded(
      await idp([
        'providers',
        'update',
        'corp-sso',
        '--display-name',
        'Corporate SSO',
        '--client-secret-file',
        file('corp.secret'),
        '--enabled',
        '--no-trust-amr',
        '--json',
      ]),
    );
    expect(Object.keys(changed).sort()).toEqual(VIEW_KEYS);
    expect(changed).toMatchObject({
      display_name: 'Corporate SSO',
      client_id: 'idp',
      issuer: 'http://127.0.0.1:9999/realms/corp',
      scopes: 'openid email',
      enabled: true,
      trust_amr: false,
    });
    expect(clientSecretOf(ctx, await stored('corp-sso'))).toBe('corp-secret-rotated');

    // "-": standard input.
    succeeded(
      await idp(['providers', 'update', 'google', '--client-secret-file', '-', '--json'], 'from-stdin\n'),
    );
    expect(clientSecretOf(ctx, await stored('google'))).toBe('from-stdin');

    const disabled = succeeded(await idp(['providers', 'update', 'github', '--disabled', '--json']));
    expect(disabled).toMatchObject({ enabled: false, linked_accounts: 2 });
    // A disabled provider keeps its secret.
    expect(clientSecretOf(ctx, await stored('github'))).toBe('github-inline-secret');
  });

  it('removes a provider with its links, saying how many', { timeout: TIMEOUT }, async () => {
    const res = await idp(['providers', 'remove', 'github']);
    expect(res).toMatchObject({
      code: 0,
      stdout: 'Removed provider github; 2 accounts lost their link to it.\n',
      stderr: '',
    });
    expect(await findProviderByName(db(), 'github')).toBeUndefined();
    expect(await db().selectFrom('upstream_links').select('id').execute()).toEqual([]);
    expect(succeeded(await idp(['providers', 'remove', 'apple', '--json']))).toEqual({
      name: 'apple',
      links_removed: 0,
    });
    failed(await idp(['providers', 'remove', 'apple']), /^idp: no provider named apple\n$/);
    failed(await idp(['providers', 'update', 'apple', '--enabled']), /^idp: no provider named apple\n$/);
  });

  it('refuses a bad setting with one line naming it, and adds nothing', { timeout: TIMEOUT }, async () => {
    const count = async () => (await db().selectFrom('upstream_providers').select('id').execute()).length;
    const before = await count();
    const add = (name: string, ...rest: string[]) => idp(['providers', 'add', name, ...rest]);
    const oneLine = /^idp: [^\n]+\n$/;
    const apple = ['--apple-team-id', 'TEAM123456', '--apple-key-id', 'KEY1234567'];
    const refusals: Array<[Promise<ProcessResult>, RegExp]> = [
      [
        add('Bad_Name', '--kind', 'github', '--client-id', 'x', '--client-secret', 's'),
        /name must be 2-32 characters/,
      ],
      [
        add(
          'corp',
          '--kind',
          'oidc',
          '--issuer',
          'http://id.example.com',
          '--display-name',
          'C',
          '--client-id',
          'x',
          '--client-secret',
          's',
        ),
        /issuer must be an https URL .*http only on a loopback host/,
      ],
      [
        add('corp', '--kind', 'oidc', '--display-name', 'C', '--client-id', 'x', '--client-secret', 's'),
        /issuer is required/,
      ],
      [add('gitlab', '--kind', 'github', '--client-id', 'x'), /client secret is required/],
      [
        add('google', '--kind', 'google', '--client-id', 'x', '--client-secret', 's'),
        /a provider named google already exists/,
      ],
      [
        add(
          'apple',
          '--kind',
          'apple',
          '--client-id',
          'x',
          '--apple-team-id',
          'TEAM123456',
          '--apple-key-id',
          'KEY1234567',
          '--apple-private-key-file',
          file('rsa.p8'),
        ),
        /Apple private key must be the PKCS#8 PEM of a P-256 key/,
      ],
      [
        add(
          'apple',
          '--kind',
          'apple',
          '--client-id',
          'x',
          '--apple-team-id',
          'team',
          '--apple-key-id',
          'KEY1234567',
          '--apple-private-key-file',
          file('AuthKey.p8'),
        ),
        /Apple team id must be 10 capital letters or digits/,
      ],
      [add('apple', '--kind', 'apple', '--client-id', 'x'), /team id is required for Apple/],
      [
        idp([
          'providers',
          'add',
          'x1',
          '--kind',
          'google',
          '--client-id',
          'x',
          '--client-secret',
          's',
          ...apple,
        ]),
        /Apple team id does not apply to a provider of kind google; Apple key id does not apply/,
      ],
      [
        idp([
          'providers',
          'add',
          'x1',
          '--kind',
          'oidc',
          '--client-id',
          'x',
          '--api-url',
          'https://a.example',
        ]),
        /API URL does not apply to a provider of kind oidc/,
      ],
      [
        idp([
          'providers',
          'add',
          'x1',
          '--kind',
          'apple',
          '--client-id',
          'x',
          '--client-secret',
          's',
          ...apple,
        ]),
        /client secret does not apply to a provider of kind apple/,
      ],
    ];
    for (const [running, message] of refusals) {
      const stderr = failed(await running, message);
      expect(stderr).toMatch(oneLine);
    }
    failed(
      await idp(['providers', 'update', 'google', '--issuer', 'ftp://accounts.google.com']),
      /issuer must be an https URL/,
    );
    // A change is held to the provider's kind too: what it would never use is not stored.
    failed(
      await idp(['providers', 'update', 'google', '--api-url', 'https://api.example']),
      /API URL does not apply to a provider of kind google/,
    );
    failed(await idp(['providers', 'update', 'google', ...apple]), /Apple team id does not apply/);
    expect(await count()).toBe(before);
    expect((await stored('google')).issuer).toBe('https://accounts.google.com');
    expect((await stored('google')).apiUrl).toBeNull();
    expect((await stored('google')).appleTeamId).toBeNull();
  });

  it('refuses a usage mistake before anything runs, with the usage line', { timeout: TIMEOUT }, async () => {
    failed(
      await idp(['providers', 'add', 'x1', '--kind', 'gitlab', '--client-id', 'x']),
      /--kind must be one of oidc, github, google, apple, got "gitlab"\nusage: idp providers add/,
    );
    failed(
      await idp([
        'providers',
        'add',
        'x1',
        '--kind',
        'github',
        '--client-id',
        'x',
        '--client-secret',
        's',
        '--client-secret-file',
        file('google.secret'),
      ]),
      /give either --client-secret or --client-secret-file, not both/,
    );
    failed(
      await idp(['providers', 'update', 'google', '--enabled', '--disabled']),
      /give either --enabled or --disabled/,
    );
    failed(
      await idp(['providers', 'update', 'google', '--trust-amr', '--no-trust-amr']),
      /give either --trust-amr or --no-trust-amr/,
    );
    failed(await idp(['providers', 'update', 'google']), /nothing to change/);
    failed(
      await idp([
        'providers',
        'update',
        'apple',
        '--client-secret-file',
        '-',
        '--apple-private-key-file',
        '-',
      ]),
      /only one option may read standard input \("-"\): --client-secret-file, --apple-private-key-file/,
    );
    await writeFile(file('huge.secret'), 'x'.repeat(64 * 1024 + 1));
    failed(
      await idp(['providers', 'update', 'google', '--client-secret-file', file('huge.secret')]),
      /--client-secret-file: .*huge\.secret is larger than 64 KiB/,
    );
    failed(
      await idp(['providers', 'update', 'google', '--client-secret-file', file('missing.secret')]),
      /--client-secret-file: cannot read .*missing\.secret \(ENOENT\)\nusage: idp providers update/,
    );
  });

  it('records provider_added, provider_updated and provider_removed as the operator, without a secret', {
    timeout: TIMEOUT,
  }, async () => {
    expect(await auditOf('corp-sso')).toMatchObject([
      { actor: 'operator', action: 'provider_added', details: { kind: 'oidc', client_secret: 'changed' } },
      {
        actor: 'operator',
        action: 'provider_updated',
        details: { displayName: 'Corporate SSO', client_secret: 'changed' },
      },
    ]);
    expect(await auditOf('github')).toMatchObject([
      { action: 'provider_added' },
      { action: 'provider_updated', details: { enabled: false } },
      { actor: 'operator', action: 'provider_removed', details: { kind: 'github', links_removed: 2 } },
    ]);
    expect(await auditOf('apple')).toMatchObject([
      { action: 'provider_added', details: { appleKeyId: 'KEY1234567', apple_private_key: 'changed' } },
      { action: 'provider_removed' },
    ]);
    const events = JSON.stringify(await db().selectFrom('audit_events').selectAll().execute());
    for (const secret of [
      'google-secret-from-file',
      'github-inline-secret',
      'corp-secret',
      'from-stdin',
      'PRIVATE KEY',
    ])
      expect(events).not.toContain(secret);
    // Nor a sealed value (lib/sealed-secret.ts: v1.<nonce>.<body>).
    expect(events).not.toMatch(/v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{16}/);
  });
});

describe('a providers command handed to the running server', () => {
  let server: ControlServer | undefined;
  afterAll(() => server?.close());

  it("runs with the file's contents the idp process read, not a path the server would read", {
    timeout: TIMEOUT,
  }, async () => {
    const socket = path.join(folder, 'idp.sock');
    server = await startControlServer(socket, { db: db(), config: ctx.config, clock: systemClock });
    const argv = ['providers', 'add', 'sent', '--kind', 'github', '--client-id', 'x', '--json'];
    // A relative path: in the server's working directory there is no such file.
    const given = [...argv, '--client-secret-file', 'not-here/github.secret'];
    const output = await sendControlRequest(socket, {
      argv: given,
      files: { 'client-secret-file': 'sent-secret' },
    });
    expect(output, output?.stderr).toMatchObject({ exitCode: 0, stderr: '' });
    expect(clientSecretOf(ctx, await stored('sent'))).toBe('sent-secret');

    const unsent = await sendControlRequest(socket, {
      argv: given.map((arg) => arg.replace('sent', 'other')),
    });
    expect(unsent).toMatchObject({
      exitCode: 1,
      stderr: expect.stringContaining('--client-secret-file: the file was not read'),
    });
    const malformed = await sendControlRequest(socket, { argv, files: { 'client-secret-file': 1 } as never });
    expect(malformed).toMatchObject({ exitCode: 1, stderr: 'idp: malformed control request\n' });
  });
});

describe('idp providers as the real process', () => {
  it('reads a --…-file option itself: "-" is a secret piped to its standard input', {
    timeout: TIMEOUT,
  }, async () => {
    const database = await cliDatabase('idp-providers-');
    try {
      const argv = ['providers', 'add', 'piped', '--kind', 'github', '--client-id', 'x', '--json'];
      const added = succeeded(
        await runIdp([...argv, '--client-secret-file', '-'], {
          env: database.env,
          stdin: 'piped-secret\n',
        }),
      );
      expect(added).toMatchObject({ name: 'piped', kind: 'github' });
      const provider = await withCliDatabase(database.env, (handle) => findProviderByName(handle, 'piped'));
      expect(provider && clientSecretOf(ctx, provider)).toBe('piped-secret');
    } finally {
      await database.drop();
    }
  });
});
