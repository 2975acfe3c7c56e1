import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, type ProcessResult, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `idp admins grant|revoke|list`: who may enter the console, run in process through the CLI's own
 * parsing against a fresh database. The tests build on each other's data.
 */
const TIMEOUT = 60_000;
let cli: InProcessCli | undefined;

beforeAll(async () => {
  cli = await inProcessCli({ PUBLIC_URL: 'https://id.example' });
});

afterAll(async () => {
  await cli?.database.drop();
});

function idp(args: readonly string[]): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args);
}

describe('idp admins', () => {
  it('grants a role, changes it, lists operators and revokes', { timeout: TIMEOUT }, async () => {
    for (const username of ['olga', 'sam'])
      succeeded(
        await idp([
          'users',
          'create',
          '--username',
          username,
          '--password',
          'long enough password',
          '--json',
        ]),
      );
    expect(succeeded(await idp(['admins', 'list', '--json']))).toEqual({ admins: [] });
    expect((await idp(['admins', 'list'])).stdout).toContain('No operators');
    expect(succeeded(await idp(['admins', 'grant', 'olga', '--role', 'owner', '--json']))).toEqual({
      username: 'olga',
      role: 'owner',
      previous: null,
    });
    expect((await idp(['admins', 'grant', 'sam', '--role', 'support'])).stdout.trim()).toBe('sam is support');
    expect((await idp(['admins', 'grant', 'sam', '--role', 'auditor'])).stdout.trim()).toBe(
      'sam is now auditor (was support)',
    );
    const listed = succeeded(await idp(['admins', 'list', '--json'])) as {
      admins: Array<Record<string, string>>;
    };
    expect(listed.admins).toEqual([
      { username: 'olga', role: 'owner', granted_at: expect.any(String), granted_by: 'operator' },
      { username: 'sam', role: 'auditor', granted_at: expect.any(String), granted_by: 'operator' },
    ]);
    expect((await idp(['admins', 'revoke', 'sam'])).stdout.trim()).toBe('sam is no longer auditor');
    failed(await idp(['admins', 'revoke', 'sam']), /has no console role/);
    const tail = succeeded(await idp(['audit', 'tail', '--action', 'operator_granted', '--json'])) as {
      events: Array<{ details: Record<string, unknown> }>;
    };
    expect(tail.events.map((event) => event.details)).toEqual([
      { username: 'olga', before: null, after: 'owner' },
      { username: 'sam', before: null, after: 'support' },
      { username: 'sam', before: 'support', after: 'auditor' },
    ]);
  });

  it('refuses an unknown role before opening the database, and an unknown user', {
    timeout: TIMEOUT,
  }, async () => {
    failed(
      await idp(['admins', 'grant', 'olga', '--role', 'root']),
      /--role must be one of owner, support, auditor/,
    );
    failed(await idp(['admins', 'grant', 'olga']), /--role/);
    failed(await idp(['admins', 'grant', 'nobody', '--role', 'owner']), /No enabled user .nobody./);
  });
});
