import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * The single-URI options of `idp clients create` and `idp clients update`, run in process through
 * the CLI's own parsing: `--backchannel-logout-uri` (migrations/0026) and `--logo-uri`
 * (migrations/0027). Each takes https, or http on a loopback host; `''` removes it; `clients list`
 * shows it; other changes leave it as it is.
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

const update = (id: string, ...change: string[]) => cli.idp(['clients', 'update', id, ...change, '--json']);

describe.each([
  {
    option: '--backchannel-logout-uri',
    field: 'backchannel_logout_uri',
    refusal: /back-channel logout URI/,
    https: 'https://site.example/bc?x=1',
    loopback: 'http://127.0.0.1:4000/bc',
    bad: ['http://site.example/bc', 'https://site.example/bc#x', 'https://u:p@site.example/bc', '/bc'],
    private: 'http://10.0.0.1/bc',
  },
  {
    option: '--logo-uri',
    field: 'logo_uri',
    refusal: /logo URI/,
    https: 'https://cdn.site.example/logo.svg',
    loopback: 'http://localhost:4000/logo.png',
    bad: [
      'http://cdn.site.example/logo.svg',
      'https://cdn.site.example/logo.svg#x',
      'https://u:p@cdn.site.example/logo.svg',
      'javascript:alert(1)',
      'data:image/png;base64,AAAA',
      '/logo.svg',
      `https://cdn.site.example/${'a'.repeat(2050)}`,
    ],
    private: 'http://10.0.0.1/logo.svg',
  },
])('idp clients $option', ({ option, field, refusal, https, loopback, bad, private: off }) => {
  it('registers it, shows it, changes it and removes it', async () => {
    const created = succeeded(await create(option, https));
    expect(created[field]).toBe(https);
    const id = created.client_id as string;
    expect(succeeded(await update(id, option, loopback))[field]).toBe(loopback);
    const listed = succeeded(await cli.idp(['clients', 'list', '--json'])).clients as Array<
      Record<string, unknown>
    >;
    expect(listed.find((c) => c.client_id === id)?.[field]).toBe(loopback);
    // Other changes leave it as it is.
    expect(succeeded(await update(id, '--name', 'Site 2'))[field]).toBe(loopback);
    expect(succeeded(await update(id, option, ''))[field]).toBeNull();
    expect(succeeded(await create())[field]).toBeNull();
  });

  it('refuses plain http off loopback, a fragment, credentials, other schemes and a relative URI', async () => {
    for (const uri of bad) failed(await create(option, uri), refusal);
    const id = succeeded(await create()).client_id as string;
    failed(await update(id, option, off), /must use https/);
  });
});
