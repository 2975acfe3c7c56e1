import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretMatchesHash } from '../../src/lib/secrets.js';
import { findClientWithSecretHash } from '../../src/modules/clients/clients.repository.js';
import { failed, type ProcessResult, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `idp clients rotate-secret CLIENT_ID --overlap SECONDS` and `idp clients update --site-url`,
 * through the CLI's own parsing and execution against a fresh database.
 */
const TIMEOUT = 60_000;
let cli: InProcessCli | undefined;
let clientId = '';
let firstSecret = '';

beforeAll(async () => {
  cli = await inProcessCli({ PUBLIC_URL: 'https://id.example' });
  const created = succeeded(
    await idp([
      'clients',
      'create',
      '--name',
      'Shop',
      '--site-url',
      'https://shop.example',
      '--redirect-uri',
      'https://shop.example/cb',
      '--json',
    ]),
  );
  clientId = String(created.client_id);
  firstSecret = String(created.client_secret);
});
afterAll(async () => {
  await cli?.database.drop();
});

function idp(args: readonly string[]): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args);
}

/** The hash of the newest valid secret, and the one before it with its expiry (the overlap's). */
async function row() {
  if (!cli) throw new Error('no CLI');
  const found = await findClientWithSecretHash(cli.database.db, clientId, new Date());
  const [newest, previous] = found?.secrets ?? [];
  if (!found || !newest) throw new Error('no client');
  return {
    secretHash: newest.hash,
    previousSecretHash: previous?.hash ?? null,
    previousSecretExpiresAt: previous?.expiresAt ?? null,
  };
}

describe('idp clients rotate-secret --overlap', () => {
  it('keeps the old secret for the overlap and says until when', { timeout: TIMEOUT }, async () => {
    const before = Date.now();
    const result = await idp(['clients', 'rotate-secret', clientId, '--overlap', '3600']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/the old one still works until 20\d\d-/);
    const stored = await row();
    expect(stored.previousSecretHash && secretMatchesHash(firstSecret, stored.previousSecretHash)).toBe(true);
    const until = stored.previousSecretExpiresAt?.getTime() ?? 0;
    expect(until).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000);

    const json = succeeded(await idp(['clients', 'rotate-secret', clientId, '--overlap', '60', '--json']));
    expect(json.previous_secret_expires_at).toEqual(expect.any(String));
    expect(JSON.stringify(json)).not.toMatch(/hash/);
  });

  it('without --overlap the old secret stops at once, as before', { timeout: TIMEOUT }, async () => {
    const rotated = succeeded(await idp(['clients', 'rotate-secret', clientId, '--json']));
    expect(rotated).not.toHaveProperty('previous_secret_expires_at');
    const stored = await row();
    expect(stored.previousSecretHash).toBeNull();
    expect(stored.previousSecretExpiresAt).toBeNull();
    expect(secretMatchesHash(String(rotated.client_secret), stored.secretHash)).toBe(true);
    const text = await idp(['clients', 'rotate-secret', clientId]);
    expect(text.stdout).toContain('the old one no longer works');
  });

  it('refuses an overlap that is not 0 to 604800 seconds, before changing anything', {
    timeout: TIMEOUT,
  }, async () => {
    const hash = (await row()).secretHash;
    for (const overlap of ['-5', '1.5', '604801', 'an hour', '']) {
      failed(
        await idp(['clients', 'rotate-secret', clientId, '--overlap', overlap]),
        /--overlap must be a whole number/,
      );
    }
    expect((await row()).secretHash).toBe(hash);
    succeeded(await idp(['clients', 'rotate-secret', clientId, '--overlap', '604800', '--json']));
  });

  it('records the overlap in the audit log, never a secret', { timeout: TIMEOUT }, async () => {
    if (!cli) throw new Error('no CLI');
    const events = await cli.database.db
      .selectFrom('audit_events')
      .select(['action', 'details'])
      .where('subject', '=', `client:${clientId}`)
      .where('action', '=', 'client_secret_rotated')
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.details.overlap_seconds)).toEqual([3600, 60, 0, 0, 604800]);
    expect(JSON.stringify(events)).not.toMatch(/sk_/);
  });
});

describe('idp clients update --site-url', () => {
  it('changes the site URL, and refuses one that is not https', { timeout: TIMEOUT }, async () => {
    const moved = succeeded(
      await idp(['clients', 'update', clientId, '--site-url', 'https://shop2.example', '--json']),
    );
    expect(moved.site_url).toBe('https://shop2.example');
    failed(
      await idp(['clients', 'update', clientId, '--site-url', 'http://shop.example']),
      /site URL must be/,
    );
  });
});
