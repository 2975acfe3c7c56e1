import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCommand } from '../../src/cli/run-command.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { failed, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';
import { usingPostgres } from '../helpers/database.js';

/*
 * `idp keys rotate [--alg A] | list | retire` and the `--id-token-alg` of
 * `idp clients create | update`, run in process through the CLI's own parsing and execution
 * (test/helpers/cli-in-process.ts) against a fresh database, then with the application serving
 * that database: a rotation is published by its JWKS at once. Handing a command to a running
 * server is test/cli/cli.test.ts's.
 */

const TIMEOUT = 60_000;
const KID = /^[A-Za-z0-9_-]{43}$/;

let cli: InProcessCli | undefined;
/** The application on the CLI's database, from the last describe on. */
let server: TestApp | undefined;

beforeAll(async () => {
  cli = await inProcessCli();
});

afterAll(async () => {
  // The application's close drops the database it was given.
  await (server ? server.close() : cli?.database.drop());
});

const idp = (args: readonly string[]) => {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args);
};

let first = '';
let second = '';

describe(`idp keys on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('keys rotate --json adds a key that signs from then on; the older keys keep verifying', {
    timeout: TIMEOUT,
  }, async () => {
    const one = succeeded(await idp(['keys', 'rotate', '--json']));
    expect(one).toEqual({
      kid: expect.stringMatching(KID),
      algorithm: 'RS256',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      verifying_kids: [one.kid],
    });
    first = String(one.kid);
    const two = succeeded(await idp(['keys', 'rotate', '--json']));
    second = String(two.kid);
    expect(second).not.toBe(first);
    expect(two.verifying_kids).toEqual([second, first]);
  });

  it('keys list --json shows every key, which one signs, and never a private part', {
    timeout: TIMEOUT,
  }, async () => {
    const result = await idp(['keys', 'list', '--json']);
    const listed = succeeded(result);
    expect(listed).toEqual({
      keys: [
        { kid: second, algorithm: 'RS256', created_at: expect.any(String), retired_at: null, signing: true },
        { kid: first, algorithm: 'RS256', created_at: expect.any(String), retired_at: null, signing: false },
      ],
    });
    expect(result.stdout).not.toMatch(/PRIVATE|"d":/);
  });

  it('keys retire refuses the signing key and an unknown kid, and retires an older key', {
    timeout: TIMEOUT,
  }, async () => {
    const refused = await idp(['keys', 'retire', second, '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^idp: .*rotate first/);
    const unknown = await idp(['keys', 'retire', 'nope', '--json']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no signing key/);

    const retired = succeeded(await idp(['keys', 'retire', first, '--json']));
    expect(retired).toMatchObject({ kid: first, algorithm: 'RS256', retired_at: expect.any(String) });
  });
});

let es256 = '';

describe(`idp keys per algorithm on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('keys rotate --alg ES256 | EdDSA adds a key of that algorithm; the RS256 key still signs', {
    timeout: TIMEOUT,
  }, async () => {
    const one = succeeded(await idp(['keys', 'rotate', '--alg', 'ES256', '--json']));
    expect(one).toMatchObject({
      kid: expect.stringMatching(KID),
      algorithm: 'ES256',
      verifying_kids: [one.kid],
    });
    const two = succeeded(await idp(['keys', 'rotate', '--alg', 'ES256', '--json']));
    // verifying_kids lists the keys of the rotated algorithm only.
    expect(two).toMatchObject({ algorithm: 'ES256', verifying_kids: [two.kid, one.kid] });
    es256 = String(two.kid);
    const ed = succeeded(await idp(['keys', 'rotate', '--alg', 'EdDSA', '--json']));
    expect(ed).toMatchObject({ algorithm: 'EdDSA', verifying_kids: [ed.kid] });

    const { keys } = succeeded(await idp(['keys', 'list', '--json'])) as {
      keys: Array<{ kid: string; algorithm: string; signing: boolean }>;
    };
    const signing = keys.filter((key) => key.signing).map((key) => [key.algorithm, key.kid]);
    expect(signing).toEqual([
      ['EdDSA', ed.kid],
      ['ES256', two.kid],
      ['RS256', second],
    ]);
    expect(keys.find((key) => key.kid === one.kid)).toMatchObject({ algorithm: 'ES256', signing: false });
    const audit = await cli?.database.db
      .selectFrom('audit_events')
      .select('details')
      .where('action', '=', 'key_rotated')
      .where('subject', '=', `key:${ed.kid}`)
      .executeTakeFirst();
    expect(audit?.details).toEqual({ algorithm: 'EdDSA' });

    const refused = await idp(['keys', 'retire', String(two.kid), '--json']);
    failed(refused, /signs new ES256 id_tokens; rotate first \(idp keys rotate --alg ES256\)/);
    expect(succeeded(await idp(['keys', 'retire', String(one.kid), '--json']))).toMatchObject({
      kid: one.kid,
      algorithm: 'ES256',
      retired_at: expect.any(String),
    });
  });

  it('refuses an unknown --alg before the database is opened', { timeout: TIMEOUT }, async () => {
    for (const alg of ['HS256', 'es256', 'Ed25519', '']) {
      failed(
        await idp(['keys', 'rotate', '--alg', alg, '--json']),
        new RegExp(`--alg must be RS256, ES256 or EdDSA, got "${alg}"\n[\\s\\S]*usage: idp keys rotate`),
      );
      // The refusal comes from parsing alone: no database is involved.
      expect(prepareCommand(['keys', 'rotate', '--alg', alg])).toMatchObject({ exitCode: 1 });
    }
  });
});

describe(`idp clients --id-token-alg on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  const create = (extra: string[]) =>
    idp([
      'clients',
      'create',
      '--name',
      'Signed Site',
      '--site-url',
      'https://signed.example',
      '--redirect-uri',
      'https://signed.example/cb',
      ...extra,
      '--json',
    ]);

  it('clients create takes --id-token-alg (RS256 by default) and shows it as id_token_signed_response_alg', {
    timeout: TIMEOUT,
  }, async () => {
    expect(succeeded(await create([]))).toMatchObject({ id_token_signed_response_alg: 'RS256' });
    const ed = succeeded(await create(['--id-token-alg', 'EdDSA']));
    expect(ed).toMatchObject({
      client_id: expect.stringMatching(/^pk_/),
      id_token_signed_response_alg: 'EdDSA',
    });
    const audit = await cli?.database.db
      .selectFrom('audit_events')
      .select('details')
      .where('action', '=', 'client_created')
      .where('subject', '=', `client:${ed.client_id}`)
      .executeTakeFirst();
    expect(audit?.details).toMatchObject({ id_token_signed_response_alg: 'EdDSA' });

    const updated = succeeded(
      await idp(['clients', 'update', String(ed.client_id), '--id-token-alg', 'ES256', '--json']),
    );
    expect(updated).toMatchObject({ client_id: ed.client_id, id_token_signed_response_alg: 'ES256' });
    const { clients } = succeeded(await idp(['clients', 'list', '--json'])) as {
      clients: Array<{ client_id: string; id_token_signed_response_alg: string }>;
    };
    expect(clients.find((client) => client.client_id === ed.client_id)?.id_token_signed_response_alg).toBe(
      'ES256',
    );
    // Other changes leave it as it is.
    const renamed = succeeded(
      await idp(['clients', 'update', String(ed.client_id), '--name', 'Renamed', '--json']),
    );
    expect(renamed).toMatchObject({ name: 'Renamed', id_token_signed_response_alg: 'ES256' });
  });

  it('refuses any other algorithm with the usage line, creating and changing nothing', {
    timeout: TIMEOUT,
  }, async () => {
    const before = succeeded(await idp(['clients', 'list', '--json']));
    failed(
      await create(['--id-token-alg', 'HS256']),
      /--id-token-alg must be RS256, ES256 or EdDSA, got "HS256"\n[\s\S]*^usage: idp clients create /m,
    );
    const target = (before.clients as Array<{ client_id: string }>)[0]?.client_id ?? '';
    failed(
      await idp(['clients', 'update', target, '--id-token-alg', 'none', '--json']),
      /--id-token-alg must be RS256, ES256 or EdDSA, got "none"\n[\s\S]*^usage: idp clients update /m,
    );
    expect(succeeded(await idp(['clients', 'list', '--json']))).toEqual(before);
  });
});

describe(`idp keys rotate while the server runs (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  beforeAll(async () => {
    // The whole application on the CLI's database, on the system clock as a server runs.
    server = await createTestApp({ database: cli?.database, clock: systemClock });
  }, TIMEOUT);

  const jwksKids = async (): Promise<string[]> => {
    if (!server) throw new Error('the server did not start');
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/oauth/jwks' });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { keys: Array<{ kid: string; alg: string }> };
    return body.keys.map((key) => `${key.alg} ${key.kid}`);
  };

  it('the server publishes a rotated key at once', { timeout: TIMEOUT }, async () => {
    const eddsa = (await jwksKids()).filter((key) => key.startsWith('EdDSA '));
    expect(await jwksKids()).toEqual([`RS256 ${second}`, `ES256 ${es256}`, ...eddsa]);
    const rotated = succeeded(await idp(['keys', 'rotate', '--json']));
    expect(rotated.verifying_kids).toEqual([rotated.kid, second]);
    const es = succeeded(await idp(['keys', 'rotate', '--alg', 'ES256', '--json']));
    expect(await jwksKids()).toEqual([
      `RS256 ${rotated.kid}`,
      `RS256 ${second}`,
      `ES256 ${es.kid}`,
      `ES256 ${es256}`,
      ...eddsa,
    ]);
  });
});
