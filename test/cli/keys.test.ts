import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliDatabase,
  type RunningServer,
  runIdp,
  startServer,
  stopAllChildren,
  succeeded,
} from '../helpers/cli.js';
import { usingPostgres } from '../helpers/database.js';

/*
 * `idp keys rotate | list | retire` (CONTRACT.md §2), run as the real CLI against a fresh database,
 * then while the server runs: a rotation is published by the server's JWKS at once.
 */

const TIMEOUT = 60_000;
const KID = /^[A-Za-z0-9_-]{43}$/;

let database: Awaited<ReturnType<typeof cliDatabase>> | undefined;
let env: Record<string, string> = {};

beforeAll(async () => {
  database = await cliDatabase('idp-keys-test-');
  env = database.env;
});

afterAll(async () => {
  await stopAllChildren();
  await database?.drop();
});

const idp = (args: readonly string[]) => runIdp(args, { env });

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
  let server: RunningServer | undefined;

  beforeAll(async () => {
    server = await startServer({ env: { ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' } });
  }, TIMEOUT);

  afterAll(async () => {
    await server?.stop();
  });

  const jwksKids = async (): Promise<string[]> => {
    if (!server) throw new Error('the server did not start');
    const res = await fetch(`${server.url}/api/v1/oauth/jwks`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { keys: Array<{ kid: string }> };
    return body.keys.map((key) => key.kid);
  };

  it('the server publishes a rotated key at once', { timeout: TIMEOUT }, async () => {
    expect(await jwksKids()).toEqual([second]);
    const rotated = succeeded(await idp(['keys', 'rotate', '--json']));
    expect(rotated.verifying_kids).toEqual([rotated.kid, second]);
    expect(await jwksKids()).toEqual([rotated.kid, second]);
  });
});
