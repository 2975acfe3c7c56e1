import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { failed, type ProcessResult, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `idp users update|disable|enable` and `idp clients update|rotate-secret`, run in
 * process through the CLI's own parsing and execution (test/helpers/cli-in-process.ts) against a
 * fresh database. Tests run in order and build on each other's data.
 */

const TIMEOUT = 60_000;
const PUBLIC_URL = 'https://id.example';

let cli: InProcessCli | undefined;

beforeAll(async () => {
  cli = await inProcessCli({ PUBLIC_URL });
});

afterAll(async () => {
  await cli?.database.drop();
});

function idp(args: readonly string[]): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args);
}

/** This file's database, read or changed directly between commands. */
function withDatabase<T>(work: (db: DatabaseHandle['db']) => Promise<T>): Promise<T> {
  if (!cli) throw new Error('no CLI');
  return work(cli.database.db);
}

let userId = 0;

describe('idp users update / disable / enable', () => {
  it('users update sets every field and prints the profile as /me shows it with all scopes', {
    timeout: TIMEOUT,
  }, async () => {
    const created = succeeded(
      await idp([
        'users',
        'create',
        '--username',
        'Dora',
        '--password',
        'long enough password',
        '--email',
        'dora@example.com',
        '--json',
      ]),
    );
    userId = Number(created.id);

    const me = succeeded(
      await idp([
        'users',
        'update',
        'dora',
        '--display-name',
        'Dora the Explorer',
        '--avatar-url',
        '/avatars/dora.png',
        '--verification-level',
        '2',
        '--email-verified',
        'true',
        '--game-name',
        'DoraPlays',
        '--game-url',
        'https://game.example/u/dora',
        '--tag-label',
        'Explorer',
        '--tag-kind',
        'badge',
        '--tag-slug',
        'explorer',
        '--json',
      ]),
    );
    const payload = {
      sub: String(userId),
      id: userId,
      name: 'Dora the Explorer',
      nickname: 'Dora the Explorer',
      preferred_username: 'Dora',
      username: 'Dora',
      display_name: 'Dora the Explorer',
      picture: 'https://id.example/avatars/dora.png',
      avatar_url: 'https://id.example/avatars/dora.png',
      game: 'https://game.example/u/dora',
      game_name: 'DoraPlays',
      game_linked: true,
      tag: { label: 'Explorer', kind: 'badge', slug: 'explorer' },
      email: 'dora@example.com',
      email_verified: true,
      verified: 2,
      verification_level: 2,
      verification_tier: 'special',
      verified_badge: true,
    };
    expect(me).toStrictEqual({ ok: true, user: payload, ...payload });
  });

  it('a new e-mail is unconfirmed; an absolute avatar URL is kept', { timeout: TIMEOUT }, async () => {
    const me = succeeded(
      await idp([
        'users',
        'update',
        'DORA',
        '--email',
        'dora2@example.com',
        '--avatar-url',
        'https://cdn.example/dora.png',
        '--verification-level',
        '1',
        '--json',
      ]),
    );
    expect(me).toMatchObject({
      email: 'dora2@example.com',
      email_verified: false,
      picture: 'https://cdn.example/dora.png',
      verified: 1,
      verification_tier: 'standard',
      user: { email: 'dora2@example.com', email_verified: false },
    });
  });

  it('--no-game and --no-tag clear them; an empty display name removes it', {
    timeout: TIMEOUT,
  }, async () => {
    const me = succeeded(
      await idp(['users', 'update', 'dora', '--no-game', '--no-tag', '--display-name', '', '--json']),
    );
    expect(me).toMatchObject({
      name: 'Dora',
      game: false,
      game_linked: false,
      user: { game: false, game_linked: false },
    });
    expect(me).not.toHaveProperty('display_name');
    expect(me).not.toHaveProperty('tag');
    expect(me).not.toHaveProperty('game_name');
    expect(me.user).not.toHaveProperty('tag');
    expect(me.user).not.toHaveProperty('display_name');
  });

  it('refuses conflicting or incomplete flags, bad values and unknown users', {
    timeout: TIMEOUT,
  }, async () => {
    failed(
      await idp(['users', 'update', 'dora', '--no-game', '--game-name', 'X', '--json']),
      /--no-game cannot be combined with --game-name[\s\S]*^usage: idp users update /m,
    );
    failed(
      await idp(['users', 'update', 'dora', '--tag-label', 'L', '--tag-kind', 'k', '--json']),
      /tag label, tag kind and tag slug must be given together/,
    );
    failed(
      await idp(['users', 'update', 'dora', '--avatar-url', 'http://cdn.example/a.png', '--json']),
      /avatar URL must be an absolute https URL/,
    );
    failed(
      await idp(['users', 'update', 'nobody', '--display-name', 'X', '--json']),
      /^idp: no user named nobody$/m,
    );
  });

  it('users disable prints {id, username, disabled, disabled_at} and ends the browser sessions; again is a no-op', {
    timeout: TIMEOUT,
  }, async () => {
    await withDatabase((db) =>
      db
        .insertInto('browser_sessions')
        .values({
          id_hash: 'session-of-dora',
          user_id: userId,
          auth_time: new Date(),
          created_at: new Date(),
          expires_at: new Date(Date.now() + 3_600_000),
        })
        .execute(),
    );
    const disabled = succeeded(await idp(['users', 'disable', 'dora', '--json']));
    expect(disabled).toStrictEqual({
      id: userId,
      username: 'Dora',
      disabled: true,
      disabled_at: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(String(disabled.disabled_at)))).toBe(false);
    expect(succeeded(await idp(['users', 'disable', 'DORA', '--json']))).toStrictEqual(disabled);

    const state = await withDatabase(async (db) => ({
      sessions: await db
        .selectFrom('browser_sessions')
        .select('id_hash')
        .where('user_id', '=', userId)
        .execute(),
      user: await db.selectFrom('users').select('disabled_at').where('id', '=', userId).executeTakeFirst(),
    }));
    expect(state.sessions).toEqual([]);
    expect(state.user?.disabled_at?.toISOString()).toBe(disabled.disabled_at);
  });

  it('users enable clears it', { timeout: TIMEOUT }, async () => {
    expect(succeeded(await idp(['users', 'enable', 'dora', '--json']))).toStrictEqual({
      id: userId,
      username: 'Dora',
      disabled: false,
      disabled_at: null,
    });
  });
});

let clientId = '';
let firstSecret = '';

describe('idp clients update / rotate-secret', () => {
  it('clients update changes the name, flags and redirect URIs and prints the client as list does', {
    timeout: TIMEOUT,
  }, async () => {
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

    const updated = succeeded(
      await idp([
        'clients',
        'update',
        clientId,
        '--name',
        'Shop Two',
        '--wallet',
        'true',
        '--official-mobile',
        'true',
        '--disabled',
        'true',
        '--add-redirect-uri',
        'https://shop.example/cb2',
        '--add-redirect-uri',
        'http://127.0.0.1:8080/cb',
        '--json',
      ]),
    );
    expect(updated).toStrictEqual({
      client_id: clientId,
      name: 'Shop Two',
      site_url: 'https://shop.example',
      redirect_uris: ['https://shop.example/cb', 'https://shop.example/cb2', 'http://127.0.0.1:8080/cb'],
      post_logout_redirect_uris: [],
      wallet: true,
      official_mobile: true,
      require_pushed_authorization_requests: false,
      device_grant: false,
      id_token_signed_response_alg: 'RS256',
      token_endpoint_auth_method: 'client_secret_basic',
      dpop_bound_access_tokens: false,
      backchannel_logout_uri: null,
      logo_uri: null,
      disabled: true,
      created_at: created.created_at,
    });

    const back = succeeded(
      await idp([
        'clients',
        'update',
        clientId,
        '--wallet',
        'false',
        '--official-mobile',
        'false',
        '--disabled',
        'false',
        '--remove-redirect-uri',
        'https://shop.example/cb',
        '--remove-redirect-uri',
        'http://127.0.0.1:8080/cb',
        '--json',
      ]),
    );
    expect(back).toMatchObject({
      name: 'Shop Two',
      wallet: false,
      official_mobile: false,
      disabled: false,
      redirect_uris: ['https://shop.example/cb2'],
    });
  });

  it('refuses removing the last redirect URI, a bad redirect URI, a bad flag value and an unknown client', {
    timeout: TIMEOUT,
  }, async () => {
    failed(
      await idp([
        'clients',
        'update',
        clientId,
        '--remove-redirect-uri',
        'https://shop.example/cb2',
        '--json',
      ]),
      /at least one redirect URI/,
    );
    failed(
      await idp(['clients', 'update', clientId, '--add-redirect-uri', 'http://shop.example/cb', '--json']),
      /must use https/,
    );
    failed(
      await idp(['clients', 'update', clientId, '--wallet', 'yes', '--json']),
      /--wallet must be true or false[\s\S]*^usage: idp clients update /m,
    );
    failed(
      await idp(['clients', 'update', 'pk_unknown', '--name', 'X', '--json']),
      /^idp: no client with client_id pk_unknown$/m,
    );
  });

  it('rotate-secret prints a new sk_ once; the stored hash changes; list never shows it', {
    timeout: TIMEOUT,
  }, async () => {
    const hashOf = () =>
      withDatabase(async (db) => {
        const row = await db
          .selectFrom('client_secrets')
          .innerJoin('clients', 'clients.id', 'client_secrets.client_pk')
          .select('client_secrets.secret_hash')
          .where('clients.client_id', '=', clientId)
          .where('client_secrets.expires_at', 'is', null)
          .executeTakeFirstOrThrow();
        return row.secret_hash;
      });
    const before = await hashOf();
    const rotated = succeeded(await idp(['clients', 'rotate-secret', clientId, '--json']));
    expect(rotated).toMatchObject({ client_id: clientId, name: 'Shop Two', disabled: false });
    expect(rotated.client_secret).toMatch(/^sk_[A-Za-z0-9_-]{43,}$/);
    expect(rotated.client_secret).not.toBe(firstSecret);
    const after = await hashOf();
    expect(after).not.toBe(before);

    const list = await idp(['clients', 'list', '--json']);
    const { client_secret: _secret, ...view } = rotated;
    expect(succeeded(list)).toEqual({ clients: [view] });
    expect(list.stdout).not.toContain('sk_');
  });
});

describe('idp clients --require-par', () => {
  it('clients create --require-par registers a client that must use PAR; update --require-par true|false changes it', {
    timeout: TIMEOUT,
  }, async () => {
    const created = succeeded(
      await idp([
        'clients',
        'create',
        '--name',
        'Bank',
        '--site-url',
        'https://bank.example',
        '--redirect-uri',
        'https://bank.example/cb',
        '--require-par',
        '--json',
      ]),
    );
    expect(created.require_pushed_authorization_requests).toBe(true);
    const id = String(created.client_id);
    const stored = () =>
      withDatabase(async (db) => {
        const row = await db
          .selectFrom('clients')
          .select('require_pushed_authorization_requests')
          .where('client_id', '=', id)
          .executeTakeFirstOrThrow();
        return row.require_pushed_authorization_requests;
      });
    expect(await stored()).toBe(true);
    const optional = succeeded(await idp(['clients', 'update', id, '--require-par', 'false', '--json']));
    expect(optional.require_pushed_authorization_requests).toBe(false);
    expect(await stored()).toBe(false);
    const required = succeeded(await idp(['clients', 'update', id, '--require-par', 'true', '--json']));
    expect(required.require_pushed_authorization_requests).toBe(true);
    failed(
      await idp(['clients', 'update', id, '--require-par', 'yes', '--json']),
      /--require-par must be true or false/,
    );
    expect(await stored()).toBe(true);
  });
});

describe('idp clients --device-grant', () => {
  it('clients create --device-grant allows the device grant; update --no-device-grant and --device-grant change it', {
    timeout: TIMEOUT,
  }, async () => {
    const create = ['clients', 'create', '--name', 'TV', '--site-url', 'https://tv.example'];
    const created = succeeded(
      await idp([...create, '--redirect-uri', 'https://tv.example/cb', '--device-grant', '--json']),
    );
    expect(created.device_grant).toBe(true);
    const id = String(created.client_id);
    const stored = () =>
      withDatabase(async (db) => {
        const row = await db
          .selectFrom('clients')
          .select('device_grant')
          .where('client_id', '=', id)
          .executeTakeFirstOrThrow();
        return row.device_grant;
      });
    expect(await stored()).toBe(true);
    // Without the flag, a client may not use it (RFC 8628 is opt-in per client).
    const plain = succeeded(await idp([...create, '--redirect-uri', 'https://tv.example/cb', '--json']));
    expect(plain.device_grant).toBe(false);

    const off = succeeded(await idp(['clients', 'update', id, '--no-device-grant', '--json']));
    expect(off.device_grant).toBe(false);
    expect(await stored()).toBe(false);
    // Another change leaves it as it is.
    succeeded(await idp(['clients', 'update', id, '--name', 'TV app', '--json']));
    expect(await stored()).toBe(false);
    const on = succeeded(await idp(['clients', 'update', id, '--device-grant', '--json']));
    expect(on.device_grant).toBe(true);
    expect(await stored()).toBe(true);
    const listed = succeeded(await idp(['clients', 'list', '--json'])).clients as Array<
      Record<string, unknown>
    >;
    expect(listed.find((each) => each.client_id === id)?.device_grant).toBe(true);
    expect((await idp(['clients', 'list'])).stdout).toMatch(/device_grant: true/);

    failed(
      await idp(['clients', 'update', id, '--device-grant', '--no-device-grant', '--json']),
      /either --device-grant or --no-device-grant, not both/,
    );
    // Not the true/false spelling of the other settings: a stray value is refused, never read as true.
    failed(
      await idp(['clients', 'update', id, '--device-grant', 'false', '--json']),
      /expected 1 argument, got 2/,
    );
    expect(await stored()).toBe(true);
  });

  it('clients create --device-grant needs no --redirect-uri; --no-device-grant waits for one', {
    timeout: TIMEOUT,
  }, async () => {
    const create = ['clients', 'create', '--name', 'X', '--site-url', 'https://tv.example'];
    const created = succeeded(await idp([...create, '--device-grant', '--public', '--json']));
    expect(created).toMatchObject({ redirect_uris: [], device_grant: true });
    const id = String(created.client_id);
    const text = await idp([...create, '--device-grant']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/device_grant: true/);
    failed(
      await idp([...create, '--json']),
      /at least one redirect URI is required, unless the client may use the device grant/,
    );

    failed(
      await idp(['clients', 'update', id, '--no-device-grant', '--json']),
      /keeps the device grant: add a redirect URI to take the grant away/,
    );
    const changed = succeeded(
      await idp([
        'clients',
        'update',
        id,
        '--no-device-grant',
        '--add-redirect-uri',
        'https://tv.example/cb',
        '--json',
      ]),
    );
    expect(changed).toMatchObject({ redirect_uris: ['https://tv.example/cb'], device_grant: false });
    succeeded(await idp(['clients', 'update', id, '--device-grant', '--json']));
    const emptied = succeeded(
      await idp(['clients', 'update', id, '--remove-redirect-uri', 'https://tv.example/cb', '--json']),
    );
    expect(emptied.redirect_uris).toEqual([]);
  });
});
