import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/lib/secrets.js';
import { consumeRegistrationToken } from '../../src/modules/developer-apps/registration-tokens.service.js';
import { failed, type ProcessResult, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `idp registration-tokens create`: an RFC 7591 initial access token made by an operator, printed
 * once, stored as a hash, with its uses, expiry and owner; audited.
 */
const TIMEOUT = 60_000;
let cli: InProcessCli | undefined;

beforeAll(async () => {
  cli = await inProcessCli({ PUBLIC_URL: 'https://id.example' });
  succeeded(
    await idp([
      'users',
      'create',
      '--username',
      'alice',
      '--password',
      'correct horse battery staple',
      '--json',
    ]),
  );
});
afterAll(async () => {
  await cli?.database.drop();
});

function idp(args: readonly string[]): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args);
}

const db = () => {
  if (!cli) throw new Error('no CLI');
  return cli.database.db;
};

describe('idp registration-tokens create', () => {
  it('prints a single-use token for 7 days once, stores only its hash, and audits it', {
    timeout: TIMEOUT,
  }, async () => {
    const before = Date.now();
    const created = succeeded(await idp(['registration-tokens', 'create', '--json']));
    expect(created).toMatchObject({ uses: 1, owner: null });
    const token = String(created.token);
    expect(token).toMatch(/^rit_[A-Za-z0-9_-]{43}$/);
    const expires = Date.parse(String(created.expires_at));
    expect(expires - before).toBeGreaterThanOrEqual(7 * 86_400_000 - 5_000);
    expect(expires - before).toBeLessThanOrEqual(7 * 86_400_000 + 60_000);
    const row = await db()
      .selectFrom('registration_tokens')
      .selectAll()
      .where('id', '=', Number(created.id))
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      token_hash: hashSecret(token),
      owner_user_id: null,
      created_by: 'cli',
      uses_left: 1,
    });
    const everything = JSON.stringify(await db().selectFrom('registration_tokens').selectAll().execute());
    expect(everything).not.toContain(token);
    const events = await db()
      .selectFrom('audit_events')
      .select(['actor', 'action', 'subject', 'details'])
      .where('subject', '=', `registration_token:${created.id}`)
      .execute();
    expect(events).toMatchObject([{ actor: 'operator', action: 'registration_token_created' }]);
    expect(JSON.stringify(events)).not.toContain(token);

    expect(await consumeRegistrationToken(db(), token, new Date())).toMatchObject({ ownerUserId: null });
    expect(await consumeRegistrationToken(db(), token, new Date())).toBeNull();
  });

  it('gives N uses, a shorter life and an owner', { timeout: TIMEOUT }, async () => {
    const created = succeeded(
      await idp([
        'registration-tokens',
        'create',
        '--uses',
        '3',
        '--expires-in',
        '3600',
        '--owner',
        'alice',
        '--json',
      ]),
    );
    expect(created).toMatchObject({ uses: 3, owner: 'alice' });
    const alice = await db()
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'alice')
      .executeTakeFirstOrThrow();
    const token = String(created.token);
    const now = new Date();
    for (let use = 0; use < 3; use += 1)
      expect(await consumeRegistrationToken(db(), token, now)).toMatchObject({ ownerUserId: alice.id });
    expect(await consumeRegistrationToken(db(), token, now)).toBeNull();
  });

  it('prints the token in its listing too, with what to do with it', { timeout: TIMEOUT }, async () => {
    const res = await idp(['registration-tokens', 'create']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/token:\s+rit_/);
    expect(res.stdout).toContain('shown only this once');
  });

  it('refuses an unknown owner, and uses or a life out of bounds, making nothing', {
    timeout: TIMEOUT,
  }, async () => {
    const count = async () => (await db().selectFrom('registration_tokens').select('id').execute()).length;
    const before = await count();
    failed(
      await idp(['registration-tokens', 'create', '--owner', 'nobody_here', '--json']),
      /no account is named nobody_here/,
    );
    failed(
      await idp(['registration-tokens', 'create', '--uses', '0', '--json']),
      /--uses must be a whole number from 1 to 1000/,
    );
    failed(await idp(['registration-tokens', 'create', '--uses', '1001']), /--uses/);
    failed(
      await idp(['registration-tokens', 'create', '--expires-in', '7776001']),
      /--expires-in must be a whole number from 60 to 7776000/,
    );
    failed(await idp(['registration-tokens', 'create', '--expires-in', 'soon']), /--expires-in/);
    expect(await count()).toBe(before);
  });

  it('explains every option in its help', { timeout: TIMEOUT }, async () => {
    const res = await idp(['registration-tokens', 'create', '--help']);
    expect(res.code).toBe(0);
    for (const option of ['--uses', '--expires-in', '--owner', '--json'])
      expect(res.stdout).toContain(option);
  });
});
