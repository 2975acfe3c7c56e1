import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `--backchannel-logout-uri` on `idp clients create` and `idp clients update`,
 * run in process through the CLI's own parsing: https, or http on a loopback host; `''` removes it.
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

describe('idp clients --backchannel-logout-uri', () => {
  it('registers it, shows it, changes it and removes it', async () => {
    const created = succeeded(await create('--backchannel-logout-uri', 'https://site.example/bc?x=1'));
    expect(created.backchannel_logout_uri).toBe('https://site.example/bc?x=1');
    const id = created.client_id as string;
    const loopback = succeeded(
      await cli.idp([
        'clients',
        'update',
        id,
        '--backchannel-logout-uri',
        'http://127.0.0.1:4000/bc',
        '--json',
      ]),
    );
    expect(loopback.backchannel_logout_uri).toBe('http://127.0.0.1:4000/bc');
    const listed = succeeded(await cli.idp(['clients', 'list', '--json'])).clients as Array<
      Record<string, unknown>
    >;
    expect(listed.find((c) => c.client_id === id)?.backchannel_logout_uri).toBe('http://127.0.0.1:4000/bc');
    const removed = succeeded(
      await cli.idp(['clients', 'update', id, '--backchannel-logout-uri', '', '--json']),
    );
    expect(removed.backchannel_logout_uri).toBeNull();
    expect(succeeded(await create()).backchannel_logout_uri).toBeNull();
  });

  it('refuses plain http off loopback, a fragment, credentials and a relative URI', async () => {
    for (const bad of [
      'http://site.example/bc',
      'https://site.example/bc#x',
      'https://u:p@site.example/bc',
      '/bc',
    ])
      failed(await create('--backchannel-logout-uri', bad), /back-channel logout URI/);
    const id = succeeded(await create()).client_id as string;
    failed(
      await cli.idp(['clients', 'update', id, '--backchannel-logout-uri', 'http://10.0.0.1/bc', '--json']),
      /must use https/,
    );
  });
});
