import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import { secretMatchesHash } from '../../../src/lib/secrets.js';
import { findClientWithSecretHash } from '../../../src/modules/clients/clients.repository.js';
import {
  createClient,
  listClients,
  rotateClientSecret,
  updateClient,
} from '../../../src/modules/clients/clients.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';

let database: TestDatabase;
const clock = fixedClock('2026-05-01T00:00:00Z');
const ctx = { config: testConfig(), clock };
let clientId = '';
let firstSecret = '';

beforeAll(async () => {
  database = await createTestDatabase();
  const client = await createClient(database.db, ctx, {
    name: 'Shop',
    siteUrl: 'https://shop.example',
    redirectUris: ['https://shop.example/cb'],
  });
  clientId = client.client_id;
  firstSecret = client.client_secret;
});
afterAll(() => database.drop());

/** The client with the hash of its newest valid secret, and how many are valid. */
async function stored() {
  const row = await findClientWithSecretHash(database.db, clientId, clock.now());
  const newest = row?.secrets[0];
  if (!row || !newest) throw new Error('the client is gone, or has no secret');
  return { ...row, secretHash: newest.hash, valid: row.secrets.length };
}

const VIEW_KEYS = [
  'backchannel_logout_uri',
  'client_id',
  'created_at',
  'device_grant',
  'disabled',
  'dpop_bound_access_tokens',
  'id_token_signed_response_alg',
  'logo_uri',
  'name',
  'official_mobile',
  'post_logout_redirect_uris',
  'redirect_uris',
  'require_pushed_authorization_requests',
  'site_url',
  'token_endpoint_auth_method',
  'wallet',
];

describe('updateClient', () => {
  it('changes the name and the flags, and returns the client as clients list shows it', async () => {
    clock.set('2026-05-02T00:00:00Z');
    const view = await updateClient(database.db, ctx, clientId, {
      name: '  Shop Two ',
      wallet: true,
      officialMobile: true,
    });
    expect(Object.keys(view).sort()).toEqual(VIEW_KEYS);
    expect(view).toMatchObject({
      client_id: clientId,
      name: 'Shop Two',
      wallet: true,
      official_mobile: true,
      disabled: false,
      redirect_uris: ['https://shop.example/cb'],
    });
    expect(await listClients(database.db)).toEqual([view]);
    expect((await stored()).updatedAt.toISOString()).toBe('2026-05-02T00:00:00.000Z');

    const back = await updateClient(database.db, ctx, clientId, { wallet: false, officialMobile: false });
    expect(back).toMatchObject({ name: 'Shop Two', wallet: false, official_mobile: false });
  });

  it('makes pushed authorization requests required, and optional again (RFC 9126 §6)', async () => {
    expect((await stored()).requirePar).toBe(false);
    const required = await updateClient(database.db, ctx, clientId, { requirePar: true });
    expect(required.require_pushed_authorization_requests).toBe(true);
    expect((await stored()).requirePar).toBe(true);
    const optional = await updateClient(database.db, ctx, clientId, { requirePar: false });
    expect(optional.require_pushed_authorization_requests).toBe(false);
    expect((await stored()).requirePar).toBe(false);
  });

  it('allows the device authorization grant, and stops allowing it (RFC 8628)', async () => {
    expect((await stored()).deviceGrant).toBe(false);
    const allowed = await updateClient(database.db, ctx, clientId, { deviceGrant: true });
    expect(allowed.device_grant).toBe(true);
    expect((await stored()).deviceGrant).toBe(true);
    expect((await updateClient(database.db, ctx, clientId, { name: 'Shop Two' })).device_grant).toBe(true);
    const refused = await updateClient(database.db, ctx, clientId, { deviceGrant: false });
    expect(refused.device_grant).toBe(false);
    expect((await stored()).deviceGrant).toBe(false);
  });

  it('disables (keeping the first disabled_at) and enables', async () => {
    clock.set('2026-05-03T00:00:00Z');
    expect(await updateClient(database.db, ctx, clientId, { disabled: true })).toMatchObject({
      disabled: true,
    });
    expect((await stored()).disabledAt?.toISOString()).toBe('2026-05-03T00:00:00.000Z');
    clock.set('2026-05-04T00:00:00Z');
    await updateClient(database.db, ctx, clientId, { disabled: true });
    expect((await stored()).disabledAt?.toISOString()).toBe('2026-05-03T00:00:00.000Z');
    expect(await updateClient(database.db, ctx, clientId, { disabled: false })).toMatchObject({
      disabled: false,
    });
    expect((await stored()).disabledAt).toBeNull();
  });

  it('adds and removes redirect URIs; adding a registered one changes nothing', async () => {
    const added = await updateClient(database.db, ctx, clientId, {
      addRedirectUris: ['https://shop.example/cb2', 'http://127.0.0.1:8080/cb', 'https://shop.example/cb'],
    });
    expect(added.redirect_uris).toEqual([
      'https://shop.example/cb',
      'https://shop.example/cb2',
      'http://127.0.0.1:8080/cb',
    ]);
    const removed = await updateClient(database.db, ctx, clientId, {
      removeRedirectUris: ['https://shop.example/cb'],
      addRedirectUris: ['https://shop.example/cb3'],
    });
    expect(removed.redirect_uris).toEqual([
      'https://shop.example/cb2',
      'http://127.0.0.1:8080/cb',
      'https://shop.example/cb3',
    ]);
  });

  it('refuses redirect URIs as clients create does, and a list outside 1–20', async () => {
    const before = await stored();
    const cases: Array<[Parameters<typeof updateClient>[3], RegExp]> = [
      [{ addRedirectUris: ['http://shop.example/cb'] }, /must use https/],
      [{ addRedirectUris: ['https://shop.example/cb#x'] }, /fragment/],
      [{ addRedirectUris: ['com.shop.app:/cb'] }, /custom scheme/],
      [{ addRedirectUris: ['javascript:alert(1)'] }, /forbidden scheme/],
      [{ removeRedirectUris: ['https://shop.example/unknown'] }, /not registered/],
      [
        { addRedirectUris: ['https://shop.example/x'], removeRedirectUris: ['https://shop.example/x'] },
        /both added and removed/,
      ],
      [{ removeRedirectUris: before.redirectUris }, /at least one redirect URI/],
      [
        { addRedirectUris: Array.from({ length: 18 }, (_, i) => `https://shop.example/n${i}`) },
        /at most 20 redirect URIs/,
      ],
      [{ name: ' ' }, /name must not be empty/],
    ];
    for (const [input, message] of cases) {
      await expect(updateClient(database.db, ctx, clientId, input)).rejects.toMatchObject({
        error: 'invalid_request',
        description: expect.stringMatching(message),
      });
    }
    expect(await stored()).toEqual(before);
  });

  it('accepts up to 20 redirect URIs', async () => {
    const current = (await stored()).redirectUris.length;
    const view = await updateClient(database.db, ctx, clientId, {
      addRedirectUris: Array.from({ length: 20 - current }, (_, i) => `https://shop.example/m${i}`),
    });
    expect(view.redirect_uris).toHaveLength(20);
  });

  it('an unknown client is not_found', async () => {
    await expect(updateClient(database.db, ctx, 'pk_unknown', { name: 'X' })).rejects.toMatchObject({
      error: 'not_found',
      description: 'no client with client_id pk_unknown',
    });
  });
});

describe('rotateClientSecret', () => {
  it('returns a new secret once; only its hash is stored and the old secret stops matching', async () => {
    const before = await stored();
    expect(secretMatchesHash(firstSecret, before.secretHash)).toBe(true);
    clock.set('2026-05-05T00:00:00Z');
    const rotated = await rotateClientSecret(database.db, ctx, clientId);
    expect(Object.keys(rotated).sort()).toEqual([...VIEW_KEYS, 'client_secret'].sort());
    expect(rotated.client_secret).toMatch(/^sk_[A-Za-z0-9_-]{43,}$/);
    expect(rotated.client_secret).not.toBe(firstSecret);
    const after = await stored();
    expect(after.secretHash).not.toBe(before.secretHash);
    expect(after.secretHash).not.toContain(rotated.client_secret);
    expect(secretMatchesHash(rotated.client_secret, after.secretHash)).toBe(true);
    expect(secretMatchesHash(firstSecret, after.secretHash)).toBe(false);
    expect(after.valid).toBe(1);
    expect(after.updatedAt.toISOString()).toBe('2026-05-05T00:00:00.000Z');
    const { client_secret: _secret, ...view } = rotated;
    expect(await listClients(database.db)).toEqual([view]);
  });

  it('an unknown client is not_found', async () => {
    await expect(rotateClientSecret(database.db, ctx, 'pk_unknown')).rejects.toMatchObject({
      error: 'not_found',
    });
  });
});

describe('createClient', () => {
  it('registers a client that must use pushed authorization requests, or by default one that need not', async () => {
    const strict = await createClient(database.db, ctx, {
      name: 'Bank',
      siteUrl: 'https://bank.example',
      redirectUris: ['https://bank.example/cb'],
      requirePar: true,
    });
    expect(strict.require_pushed_authorization_requests).toBe(true);
    const plain = await createClient(database.db, ctx, {
      name: 'Blog',
      siteUrl: 'https://blog.example',
      redirectUris: ['https://blog.example/cb'],
    });
    expect(plain.require_pushed_authorization_requests).toBe(false);
    const rows = await findClientWithSecretHash(database.db, strict.client_id, clock.now());
    expect(rows?.requirePar).toBe(true);
  });

  it('registers a client that may use the device grant only when asked to', async () => {
    const tv = await createClient(database.db, ctx, {
      name: 'TV',
      siteUrl: 'https://tv.example',
      redirectUris: ['https://tv.example/cb'],
      deviceGrant: true,
    });
    expect(tv.device_grant).toBe(true);
    expect((await findClientWithSecretHash(database.db, tv.client_id, clock.now()))?.deviceGrant).toBe(true);
    const site = await createClient(database.db, ctx, {
      name: 'Site',
      siteUrl: 'https://site.example',
      redirectUris: ['https://site.example/cb'],
    });
    expect(site.device_grant).toBe(false);
  });
});
