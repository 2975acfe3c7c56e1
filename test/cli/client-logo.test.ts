import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `--logo-uri` on `idp clients create` and `idp clients update` (migrations/0027), run in process
 * through the CLI's own parsing: https, or http on a loopback host; `''` removes it; `clients list`
 * shows it.
 */

let cli: InProcessCli;

beforeAll(async () => {
  cli = await inProcessCli({ PUBLIC_URL: 'https://id.example' });
});
afterAll(async () => {
  await cli?.database.drop();
});

const create = (...extra: string[]) =>
  cli.idp([
    'clients',
    'create',
    '--name',
    'Site',
    '--site-url',
    'https://site.example',
    '--redirect-uri',
    'https://site.example/cb',
    ...extra,
    '--json',
  ]);

describe('idp clients --logo-uri', () => {
  it('registers it, shows it, changes it and removes it', async () => {
    const created = succeeded(await create('--logo-uri', 'https://cdn.site.example/logo.svg'));
    expect(created.logo_uri).toBe('https://cdn.site.example/logo.svg');
    const id = created.client_id as string;
    const loopback = succeeded(
      await cli.idp(['clients', 'update', id, '--logo-uri', 'http://localhost:4000/logo.png', '--json']),
    );
    expect(loopback.logo_uri).toBe('http://localhost:4000/logo.png');
    const listed = succeeded(await cli.idp(['clients', 'list', '--json'])).clients as Array<
      Record<string, unknown>
    >;
    expect(listed.find((c) => c.client_id === id)?.logo_uri).toBe('http://localhost:4000/logo.png');
    // Other changes leave it as it is.
    const renamed = succeeded(await cli.idp(['clients', 'update', id, '--name', 'Site 2', '--json']));
    expect(renamed.logo_uri).toBe('http://localhost:4000/logo.png');
    const removed = succeeded(await cli.idp(['clients', 'update', id, '--logo-uri', '', '--json']));
    expect(removed.logo_uri).toBeNull();
    expect(succeeded(await create()).logo_uri).toBeNull();
  });

  it('refuses plain http off loopback, a fragment, credentials, other schemes and a relative URI', async () => {
    for (const bad of [
      'http://cdn.site.example/logo.svg',
      'https://cdn.site.example/logo.svg#x',
      'https://u:p@cdn.site.example/logo.svg',
      'javascript:alert(1)',
      'data:image/png;base64,AAAA',
      '/logo.svg',
      `https://cdn.site.example/${'a'.repeat(2050)}`,
    ])
      failed(await create('--logo-uri', bad), /logo URI/);
    const id = succeeded(await create()).client_id as string;
    failed(
      await cli.idp(['clients', 'update', id, '--logo-uri', 'http://10.0.0.1/logo.svg', '--json']),
      /must use https/,
    );
  });
});
