import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, type ProcessResult, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `idp users list` and `idp users find`: an operator finds an account without knowing its
 * username (a support request names an address), run in process through the CLI's own parsing.
 */

const TIMEOUT = 60_000;
let cli: InProcessCli | undefined;

beforeAll(async () => {
  cli = await inProcessCli({ PUBLIC_URL: 'https://id.example' });
  for (const [username, email] of [
    ['erin', 'Erin@Example.com'],
    ['erik', 'shared@example.org'],
    ['frank', 'shared@example.org'],
  ] as const)
    succeeded(
      await idp([
        'users',
        'create',
        '--username',
        username,
        '--password',
        'long enough password',
        '--email',
        email,
        '--json',
      ]),
    );
  succeeded(await idp(['users', 'disable', 'frank', '--json']));
}, TIMEOUT);
afterAll(async () => {
  await cli?.database.drop();
});

function idp(args: readonly string[]): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args);
}

type Listed = { users: Array<Record<string, unknown>> };
const usernames = (result: ProcessResult) => (succeeded(result) as Listed).users.map((user) => user.username);

describe('idp users find', () => {
  it('finds by e-mail address in any case, every holder, with status and verification', {
    timeout: TIMEOUT,
  }, async () => {
    const found = succeeded(
      await idp(['users', 'find', '--email', 'SHARED@example.org', '--json']),
    ) as Listed;
    expect(found.users).toEqual([
      expect.objectContaining({ username: 'erik', status: 'active', email_verified: false }),
      expect.objectContaining({ username: 'frank', status: 'disabled' }),
    ]);
    expect(Object.keys(found.users[0] ?? {}).sort()).toEqual(
      ['created_at', 'display_name', 'email', 'email_verified', 'id', 'status', 'username'].sort(),
    );
  });

  it('finds by username in any case and by id; nothing found is an empty list', {
    timeout: TIMEOUT,
  }, async () => {
    const [erin] = (succeeded(await idp(['users', 'find', '--username', 'ERIN', '--json'])) as Listed).users;
    expect(erin?.username).toBe('erin');
    expect(usernames(await idp(['users', 'find', '--id', String(erin?.id), '--json']))).toEqual(['erin']);
    expect(usernames(await idp(['users', 'find', '--email', 'nobody@example.com', '--json']))).toEqual([]);
  });

  it('prints one account a line without --json', { timeout: TIMEOUT }, async () => {
    const result = await idp(['users', 'find', '--email', 'erin@example.com']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^\d+ {2}erin {2}active {2}Erin@Example\.com \(unverified\) {2}- {2}\d{4}-/,
    );
  });

  it('needs exactly one of --username, --email and --id', { timeout: TIMEOUT }, async () => {
    failed(await idp(['users', 'find', '--json']), /exactly one of --username, --email and --id/);
    failed(await idp(['users', 'find', '--username', 'a', '--email', 'b', '--json']), /exactly one/);
    failed(await idp(['users', 'find', '--id', 'x1', '--json']), /--id must be a user id/);
  });
});

describe('idp users list', () => {
  it('lists the newest accounts first, as many as --limit', { timeout: TIMEOUT }, async () => {
    expect(usernames(await idp(['users', 'list', '--json']))).toEqual(['frank', 'erik', 'erin']);
    expect(usernames(await idp(['users', 'list', '--limit', '1', '--json']))).toEqual(['frank']);
    failed(
      await idp(['users', 'list', '--limit', '0', '--json']),
      /--limit must be a whole number from 1 to 1000/,
    );
  });

  it('searches as the console does: prefixes first, then parts of addresses', {
    timeout: TIMEOUT,
  }, async () => {
    expect(usernames(await idp(['users', 'list', '--search', 'eri', '--json']))).toEqual(['erik', 'erin']);
    expect(usernames(await idp(['users', 'list', '--search', 'example.org', '--json']))).toEqual([
      'erik',
      'frank',
    ]);
  });
});
