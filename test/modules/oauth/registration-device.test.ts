import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { makeUser, type TestUser } from '../../helpers/factories.js';
import { initialToken, manage, type Registered, register } from './registration.fixture.js';

/*
 * RFC 7591 §2: redirect_uris is for redirect-based flows. A client registered for the device grant
 * (RFC 8628) alone, without authorization_code, registers and is managed (RFC 7592) without any.
 */
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
const TV = {
  client_name: 'Lantern TV',
  client_uri: 'https://tv.example',
  token_endpoint_auth_method: 'none',
};

let t: TestApp;
let owner: TestUser;
beforeAll(async () => {
  t = await createTestApp({ env: { DEVELOPER_CHANGES_PER_HOUR: '40' } });
  owner = await makeUser(t);
});
afterAll(() => t.close());

async function registered(body: unknown): Promise<Registered> {
  const res = await register(t, await initialToken(t, { ownerUserId: owner.id }), body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as Registered;
}

const row = (clientId: string) =>
  t.database.db
    .selectFrom('clients')
    .select(['redirect_uris', 'device_grant'])
    .where('client_id', '=', clientId)
    .executeTakeFirstOrThrow();

describe('a device client without redirect_uris', () => {
  it('registers with grant_types holding the device grant alone, or with refresh_token', async () => {
    const alone = await registered({ ...TV, grant_types: [DEVICE] });
    expect(alone).toMatchObject({
      redirect_uris: [],
      grant_types: ['refresh_token', DEVICE],
      response_types: [],
    });
    expect(await row(alone.client_id)).toEqual({ redirect_uris: [], device_grant: true });
    const refreshing = await registered({ ...TV, redirect_uris: [], grant_types: [DEVICE, 'refresh_token'] });
    expect(refreshing.redirect_uris).toEqual([]);
  });

  it('reads its metadata back, and sending it again changes nothing (RFC 7592 §2.2)', async () => {
    const client = await registered({ ...TV, grant_types: [DEVICE] });
    const read = await manage(t, 'GET', client.client_id, client.registration_access_token);
    expect(read.statusCode).toBe(200);
    const { registration_access_token: _token, registration_client_uri: _uri, ...metadata } = read.json();
    const put = await manage(t, 'PUT', client.client_id, client.registration_access_token, metadata);
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toEqual(read.json());
  });

  it('is refused without the device grant, or with the code flow too: invalid_redirect_uri', async () => {
    const token = await initialToken(t, { ownerUserId: owner.id, uses: 10 });
    for (const body of [
      TV,
      { ...TV, redirect_uris: [] },
      { ...TV, grant_types: ['authorization_code', DEVICE] },
      { ...TV, redirect_uris: [], grant_types: ['refresh_token'] },
    ]) {
      const res = await register(t, token, body);
      expectApiError(res, 400, 'invalid_redirect_uri');
      expect(res.json().error_description).toMatch(/redirect URI/);
    }
  });

  it('keeps the device grant at a PUT until it has a redirect URI', async () => {
    const client = await registered({ ...TV, grant_types: [DEVICE] });
    const put = (body: unknown) =>
      manage(t, 'PUT', client.client_id, client.registration_access_token, {
        ...TV,
        client_id: client.client_id,
        ...(body as object),
      });
    expectApiError(await put({ grant_types: ['refresh_token'] }), 400, 'invalid_redirect_uri');
    expectApiError(await put({}), 400, 'invalid_redirect_uri');
    expect(await row(client.client_id)).toEqual({ redirect_uris: [], device_grant: true });
    const withUri = await put({ redirect_uris: ['https://tv.example/cb'] });
    expect(withUri.statusCode, withUri.body).toBe(200);
    expect(withUri.json()).toMatchObject({
      redirect_uris: ['https://tv.example/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(await row(client.client_id)).toEqual({
      redirect_uris: ['https://tv.example/cb'],
      device_grant: false,
    });
  });
});
