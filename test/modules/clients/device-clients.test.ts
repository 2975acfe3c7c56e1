import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import { findClientWithSecretHash } from '../../../src/modules/clients/clients.repository.js';
import { createClient, updateClient } from '../../../src/modules/clients/clients.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../../helpers/database.js';

/*
 * A client that may use the device grant (RFC 8628) needs no redirect URI: its devices never
 * receive a redirect. Every other client needs one, in the service and in the table alike.
 */
let database: TestDatabase;
const clock = fixedClock('2026-05-01T00:00:00Z');
const ctx = { config: testConfig(), clock };

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

const tv = (extra: Record<string, unknown> = {}) =>
  createClient(database.db, ctx, {
    name: 'Lantern TV',
    siteUrl: 'https://tv.example',
    redirectUris: [],
    isPublic: true,
    deviceGrant: true,
    ...extra,
  });

const redirectUrisOf = async (clientId: string) =>
  (await findClientWithSecretHash(database.db, clientId, clock.now()))?.redirectUris;

describe(`a device client without redirect URIs, on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('is registered with the device grant and no redirect URI', async () => {
    const client = await tv();
    expect(client).toMatchObject({ redirect_uris: [], device_grant: true });
    expect(await redirectUrisOf(client.client_id)).toEqual([]);
  });

  it('is refused without the device grant, on redirectUris', async () => {
    for (const deviceGrant of [false, undefined]) {
      await expect(tv({ deviceGrant })).rejects.toMatchObject({
        error: 'invalid_request',
        fields: {
          redirectUris:
            'at least one redirect URI is required, unless the client may use the device grant (RFC 8628)',
        },
      });
    }
  });

  it('keeps the other rules: at most 20, each URI checked', async () => {
    await expect(
      tv({ redirectUris: Array.from({ length: 21 }, (_, i) => `https://tv.example/${i}`) }),
    ).rejects.toMatchObject({
      fields: { redirectUris: 'a client may have at most 20 redirect URIs' },
    });
    await expect(tv({ redirectUris: ['http://tv.example/cb'] })).rejects.toMatchObject({
      fields: { redirectUris: expect.stringMatching(/must use https/) },
    });
  });

  it('loses its last redirect URI while it has the grant, or gets it in the same change', async () => {
    const client = await tv({ redirectUris: ['https://tv.example/cb'] });
    const emptied = await updateClient(database.db, ctx, client.client_id, {
      removeRedirectUris: ['https://tv.example/cb'],
    });
    expect(emptied.redirect_uris).toEqual([]);
    expect(await redirectUrisOf(client.client_id)).toEqual([]);

    const site = await tv({ redirectUris: ['https://tv.example/cb'], deviceGrant: false });
    const granted = await updateClient(database.db, ctx, site.client_id, {
      deviceGrant: true,
      removeRedirectUris: ['https://tv.example/cb'],
    });
    expect(granted).toMatchObject({ redirect_uris: [], device_grant: true });
  });

  it('a client without the grant still keeps one redirect URI', async () => {
    const site = await tv({ redirectUris: ['https://tv.example/cb'], deviceGrant: false });
    await expect(
      updateClient(database.db, ctx, site.client_id, { removeRedirectUris: ['https://tv.example/cb'] }),
    ).rejects.toMatchObject({ fields: { redirectUris: expect.stringMatching(/at least one redirect URI/) } });
    // Taking the grant away and the last URI in one change.
    const device = await tv({ redirectUris: ['https://tv.example/cb'] });
    await expect(
      updateClient(database.db, ctx, device.client_id, {
        deviceGrant: false,
        removeRedirectUris: ['https://tv.example/cb'],
      }),
    ).rejects.toMatchObject({ fields: { redirectUris: expect.stringMatching(/at least one redirect URI/) } });
    expect(await redirectUrisOf(device.client_id)).toEqual(['https://tv.example/cb']);
  });

  it('keeps the device grant while it has no redirect URI: one is added first, or in the same change', async () => {
    const client = await tv();
    await expect(
      updateClient(database.db, ctx, client.client_id, { deviceGrant: false }),
    ).rejects.toMatchObject({
      error: 'invalid_request',
      fields: {
        deviceGrant:
          'a client without redirect URIs keeps the device grant: add a redirect URI to take the grant away',
      },
    });
    // Any other change with it is refused too, and nothing is written.
    await expect(
      updateClient(database.db, ctx, client.client_id, { deviceGrant: false, name: 'Renamed' }),
    ).rejects.toMatchObject({ fields: { deviceGrant: expect.any(String) } });
    const row = await findClientWithSecretHash(database.db, client.client_id, clock.now());
    expect(row).toMatchObject({ deviceGrant: true, name: 'Lantern TV', redirectUris: [] });

    const changed = await updateClient(database.db, ctx, client.client_id, {
      deviceGrant: false,
      addRedirectUris: ['https://tv.example/cb'],
    });
    expect(changed).toMatchObject({ device_grant: false, redirect_uris: ['https://tv.example/cb'] });
    // Unchanged grant: other changes go through.
    const other = await tv();
    expect((await updateClient(database.db, ctx, other.client_id, { name: 'Beacon TV' })).name).toBe(
      'Beacon TV',
    );
    expect((await updateClient(database.db, ctx, other.client_id, { deviceGrant: true })).device_grant).toBe(
      true,
    );
  });

  it('the table refuses a client without the grant and without a redirect URI (migrations/0045)', async () => {
    const site = await tv({ redirectUris: ['https://tv.example/cb'], deviceGrant: false });
    await expect(
      database.db
        .updateTable('clients')
        .set({ redirect_uris: [] })
        .where('client_id', '=', site.client_id)
        .execute(),
    ).rejects.toMatchObject({ code: '23514' });
    const device = await tv();
    await expect(
      database.db
        .updateTable('clients')
        .set({ device_grant: false })
        .where('client_id', '=', device.client_id)
        .execute(),
    ).rejects.toMatchObject({ code: '23514' });
    await expect(
      database.db
        .insertInto('clients')
        .values({ client_id: 'pk_no_redirect', name: 'X', site_url: 'https://x.example', redirect_uris: [] })
        .execute(),
    ).rejects.toMatchObject({ code: '23514' });
    await expect(
      database.db
        .updateTable('clients')
        .set({ redirect_uris: Array.from({ length: 21 }, (_, i) => `https://tv.example/${i}`) })
        .where('client_id', '=', device.client_id)
        .execute(),
    ).rejects.toMatchObject({ code: '23514' });
    // With the grant, the table takes none.
    await database.db
      .insertInto('clients')
      .values({
        client_id: 'pk_device_only',
        name: 'X',
        site_url: 'https://x.example',
        redirect_uris: [],
        device_grant: true,
      })
      .execute();
  });
});
