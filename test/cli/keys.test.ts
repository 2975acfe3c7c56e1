import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';
import { usingPostgres } from '../helpers/database.js';

/*
 * `idp keys rotate | list | retire` (CONTRACT.md §2), run in process through the CLI's own parsing
 * and execution (test/helpers/cli-in-process.ts) against a fresh database, then with the
 * application serving that database: a rotation is published by its JWKS at once. Handing a
 * command to a running server is test/cli/cli.test.ts's.
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

describe(`idp keys rotate while the server runs (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  beforeAll(async () => {
    // The whole application on the CLI's database, on the system clock as a server runs.
    server = await createTestApp({ database: cli?.database, clock: systemClock });
  }, TIMEOUT);

  const jwksKids = async (): Promise<string[]> => {
    if (!server) throw new Error('the server did not start');
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/oauth/jwks' });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { keys: Array<{ kid: string }> };
    return body.keys.map((key) => key.kid);
  };

  it('the server publishes a rotated key at once', { timeout: TIMEOUT }, async () => {
    expect(await jwksKids()).toEqual([second]);
    const rotated = succeeded(await idp(['keys', 'rotate', '--json']));
    expect(rotated.verifying_kids).toEqual([rotated.kid, second]);
    expect(await jwksKids()).toEqual([rotated.kid, second]);
  });
});
