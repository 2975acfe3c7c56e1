import { describe, expect, it } from 'vitest';
import { updateClient } from '../../../src/modules/clients/clients.service.js';
import { expectApiError } from '../../helpers/assertions.js';
import { Browser } from '../../helpers/browser.js';
import { makeOfficialApp, makeUser } from '../../helpers/factories.js';

import {
  alice,
  appClientId,
  bearerGet,
  Phone,
  post,
  setUpMobileApp,
  t,
  thirdParty,
} from './mobile.fixture.js';

/*
 * Only the official app may use the mobile routes; malformed bodies get 400 invalid_request; the
 * account page lists and signs out the app's devices.
 */

setUpMobileApp();

describe('only the official app', () => {
  const routes = ['challenge', 'verify', 'refresh', 'logout'] as const;

  it('refuses a third-party client on every route with 403 access_denied, whatever else it sends', async () => {
    const phone = new Phone(thirdParty.clientId);
    for (const route of routes) {
      const res = await post(`/api/v1/mobile/${route}`, {
        client_id: thirdParty.clientId,
        device_id: phone.deviceId,
      });
      expectApiError(res, 403, 'access_denied');
      expect(JSON.stringify(res.json())).not.toMatch(/official|flag|mobile client/i);
    }
  });

  it('refuses an unknown client_id the same way', async () => {
    for (const route of routes) {
      expectApiError(
        await post(`/api/v1/mobile/${route}`, { client_id: 'pk_unknown', device_id: 'device-000001' }),
        403,
        'access_denied',
      );
    }
  });

  it('refuses the official client once it is disabled', async () => {
    const spare = await makeOfficialApp(t, { name: 'Spare app', redirectUris: ['https://id.example/spare'] });
    const phone = new Phone(spare.clientId);
    await phone.challenge();
    await updateClient(t.database.db, { config: t.config, clock: t.clock }, spare.clientId, {
      disabled: true,
    });
    expectApiError(
      await post('/api/v1/mobile/challenge', { client_id: spare.clientId, device_id: phone.deviceId }),
      403,
      'access_denied',
    );
  });

  it("refuses a third party's token on logout even with the app's client_id", async () => {
    const phone = new Phone();
    expect((await phone.verify()).statusCode).toBe(200);
    const { insertAccessToken } = await import('../../helpers/tokens.js');
    const foreign = await insertAccessToken(t.database.db, {
      userId: alice.id,
      clientId: thirdParty.clientId,
      scopes: ['openid'],
      clock: t.clock,
    });
    expectApiError(
      await post(
        '/api/v1/mobile/logout',
        { client_id: appClientId, device_id: phone.deviceId },
        { authorization: `Bearer ${foreign}` },
      ),
      403,
      'access_denied',
    );
  });

  it('lists the four routes as mobile in the catalogue', async () => {
    const catalogue = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json() as {
      routes: Array<{ method: string; path: string; auth: string }>;
    };
    for (const route of routes) {
      expect(catalogue.routes).toContainEqual(
        expect.objectContaining({ method: 'POST', path: `/api/v1/mobile/${route}`, auth: 'mobile' }),
      );
    }
  });
});

describe('malformed requests: 400 invalid_request', () => {
  it.each([
    ['a short device_id', { device_id: 'short' }],
    ['a device_id with a space', { device_id: 'device id 123' }],
    ['a device_id of 129 characters', { device_id: 'd'.repeat(129) }],
    ['a numeric device_id', { device_id: 12345678 }],
  ])('challenge with %s', async (_, body) => {
    expectApiError(
      await post('/api/v1/mobile/challenge', { client_id: appClientId, ...body }),
      400,
      'invalid_request',
    );
  });

  it('a missing client_id, and a body that is not an object', async () => {
    expectApiError(
      await post('/api/v1/mobile/challenge', { device_id: 'device-000001' }),
      400,
      'invalid_request',
    );
    expectApiError(await post('/api/v1/mobile/challenge', ['x']), 400, 'invalid_request');
  });

  it.each([
    ['a public key that is not 32 bytes', { public_key: 'AAAA' }],
    ['a public key that is not base64url', { public_key: `${'+'.repeat(42)}=` }],
    ['a signature that is not 64 bytes', { signature: 'AAAA' }],
    ['a missing password', { password: undefined }],
    ['a numeric username', { username: 42 }],
  ])('verify with %s', async (_, overrides) => {
    const phone = new Phone();
    const challenge = await phone.challenge();
    const res = await post('/api/v1/mobile/verify', phone.verifyBody(challenge, overrides));
    expectApiError(res, 400, 'invalid_request');
  });
});

describe('the account page', () => {
  it('lists the signed-in devices and signs one out', async () => {
    const carol = await makeUser(t);
    const phone = new Phone();
    expect((await phone.verify({ username: carol.username, password: carol.password })).statusCode).toBe(200);

    const browser = new Browser(t.app);
    expect(
      (await browser.submit('/signin', '/signin', { username: carol.username, password: carol.password }))
        .statusCode,
    ).toBe(303);
    const page = await browser.get('/account');
    expect(page.body).toContain('Signed-in devices');
    expect(page.body).toContain('TestPhone/1.0 (Android 15)');

    const signedOut = await browser.submit('/account', '/account/devices/signout', {});
    expect(signedOut.statusCode).toBe(303);
    expect(signedOut.headers.location).toBe('/account?notice=device_signed_out');
    expectApiError(await bearerGet('/api/v1/me', phone.accessToken), 401, 'invalid_token');
    expectApiError(await phone.refresh(), 400, 'invalid_grant');
    expect((await browser.get('/account')).body).toContain('The mobile app is not signed in on any device.');
  });

  it("cannot sign out another user's device", async () => {
    const dave = await makeUser(t);
    const phone = new Phone();
    expect((await phone.verify()).statusCode).toBe(200);
    const device = await t.database.db
      .selectFrom('mobile_devices')
      .select('id')
      .where('device_id', '=', phone.deviceId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    const browser = new Browser(t.app);
    await browser.submit('/signin', '/signin', { username: dave.username, password: dave.password });
    const page = await browser.get('/account');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const res = await browser.post('/account/devices/signout', {
      csrf_token: csrf,
      device: String(device.id),
    });
    expect(res.headers.location).toBe('/account?notice=unknown_device');
    expect((await bearerGet('/api/v1/me', phone.accessToken)).statusCode).toBe(200);
  });
});
