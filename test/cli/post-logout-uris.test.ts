import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, type ProcessResult, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * The post-logout redirect URIs of a client (OIDC RP-Initiated Logout 1.0 §3.1):
 * `--post-logout-redirect-uri` at `idp clients create`, `--add-/--remove-post-logout-redirect-uri`
 * at `idp clients update`, checked as redirect URIs are (https, or http on a loopback host).
 * Run in process; the tests build on each other's client.
 */

let cli: InProcessCli | undefined;
let clientId = '';

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

const create = [
  'clients',
  'create',
  '--name',
  'Shop',
  '--site-url',
  'https://shop.example',
  '--redirect-uri',
  'https://shop.example/cb',
];

describe('post-logout redirect URIs', () => {
  it('clients create registers them (none by default) and lists them', async () => {
    const plain = succeeded(await idp([...create, '--json']));
    expect(plain.post_logout_redirect_uris).toEqual([]);
    const created = succeeded(
      await idp([
        ...create,
        '--post-logout-redirect-uri',
        'https://shop.example/bye',
        '--post-logout-redirect-uri',
        'http://127.0.0.1:8080/bye',
        '--json',
      ]),
    );
    expect(created.post_logout_redirect_uris).toEqual([
      'https://shop.example/bye',
      'http://127.0.0.1:8080/bye',
    ]);
    clientId = String(created.client_id);
    const listing = succeeded(await idp(['clients', 'list', '--json'])) as {
      clients: Array<Record<string, unknown>>;
    };
    expect(
      listing.clients.find((client) => client.client_id === clientId)?.post_logout_redirect_uris,
    ).toEqual(['https://shop.example/bye', 'http://127.0.0.1:8080/bye']);
  });

  it('clients create refuses a URI that is not https or loopback http, a fragment and a custom scheme', async () => {
    for (const [uri, message] of [
      ['http://shop.example/bye', /post-logout redirect URI .http:\/\/shop.example\/bye. must use https/],
      ['https://shop.example/bye#x', /must not contain a fragment/],
      ['com.example.app:/bye', /must use https/],
      ['/bye', /is not an absolute URI/],
    ] as const) {
      failed(await idp([...create, '--post-logout-redirect-uri', uri, '--json']), message);
    }
  });

  it('clients update removes, then adds; the last one may go', async () => {
    const updated = succeeded(
      await idp([
        'clients',
        'update',
        clientId,
        '--remove-post-logout-redirect-uri',
        'http://127.0.0.1:8080/bye',
        '--add-post-logout-redirect-uri',
        'https://shop.example/bye2',
        '--json',
      ]),
    );
    expect(updated.post_logout_redirect_uris).toEqual([
      'https://shop.example/bye',
      'https://shop.example/bye2',
    ]);
    // The redirect URIs are another list: untouched.
    expect(updated.redirect_uris).toEqual(['https://shop.example/cb']);
    const emptied = succeeded(
      await idp([
        'clients',
        'update',
        clientId,
        '--remove-post-logout-redirect-uri',
        'https://shop.example/bye',
        '--remove-post-logout-redirect-uri',
        'https://shop.example/bye2',
        '--json',
      ]),
    );
    expect(emptied.post_logout_redirect_uris).toEqual([]);
  });

  it('clients update refuses a non-https non-loopback URI, an unregistered removal, and adding what it removes', async () => {
    const update = ['clients', 'update', clientId];
    failed(
      await idp([...update, '--add-post-logout-redirect-uri', 'http://shop.example/bye', '--json']),
      /must use https/,
    );
    failed(
      await idp([...update, '--remove-post-logout-redirect-uri', 'https://shop.example/none', '--json']),
      /post-logout redirect URI .https:\/\/shop.example\/none. is not registered for this client/,
    );
    failed(
      await idp([
        ...update,
        '--add-post-logout-redirect-uri',
        'https://shop.example/x',
        '--remove-post-logout-redirect-uri',
        'https://shop.example/x',
        '--json',
      ]),
      /both added and removed/,
    );
    const listing = succeeded(await idp(['clients', 'list', '--json'])) as {
      clients: Array<Record<string, unknown>>;
    };
    expect(
      listing.clients.find((client) => client.client_id === clientId)?.post_logout_redirect_uris,
    ).toEqual([]);
  });
});
