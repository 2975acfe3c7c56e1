import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectApiError } from '../../helpers/assertions.js';
import { makeUser } from '../../helpers/factories.js';

import { appClientId, bearerGet, Phone, post, REFUSED, setUpMobileApp, t } from './mobile.fixture.js';

/*
 * What verify, refresh and logout of the mobile app refuse, with one answer for
 * every reason a sign-in fails.
 */

setUpMobileApp();

describe('verify refuses, with one answer for every reason', () => {
  it('a replayed challenge', async () => {
    const phone = new Phone();
    const challenge = await phone.challenge();
    expect((await post('/api/v1/mobile/verify', phone.verifyBody(challenge))).statusCode).toBe(200);
    const replay = await post('/api/v1/mobile/verify', phone.verifyBody(challenge));
    expectApiError(replay, 400, 'invalid_grant');
    expect(replay.json().error_description).toEqual(REFUSED);
  });

  it('an expired challenge', async () => {
    const phone = new Phone();
    const challenge = await phone.challenge();
    const start = t.clock.now();
    try {
      t.clock.advance(121_000);
      expectApiError(await post('/api/v1/mobile/verify', phone.verifyBody(challenge)), 400, 'invalid_grant');
    } finally {
      t.clock.set(start);
    }
  });

  it('a challenge this service never issued', async () => {
    const phone = new Phone();
    const forged = 'A'.repeat(43);
    expectApiError(await post('/api/v1/mobile/verify', phone.verifyBody(forged)), 400, 'invalid_grant');
  });

  it('a challenge issued to another device', async () => {
    const phone = new Phone();
    const other = new Phone();
    const challenge = await other.challenge();
    expectApiError(await post('/api/v1/mobile/verify', phone.verifyBody(challenge)), 400, 'invalid_grant');
    // The other device can still use it: a failed attempt elsewhere does not burn it.
    expect((await post('/api/v1/mobile/verify', other.verifyBody(challenge))).statusCode).toBe(200);
  });

  it('a signature by another key than the public key sent', async () => {
    const phone = new Phone();
    const intruder = generateKeyPairSync('ed25519');
    const challenge = await phone.challenge();
    const res = await post(
      '/api/v1/mobile/verify',
      phone.verifyBody(challenge, {
        signature: phone.signature(challenge, phone.deviceId, intruder.privateKey),
      }),
    );
    expectApiError(res, 400, 'invalid_grant');
    expect(res.json().error_description).toEqual(REFUSED);
  });

  it('a signature over another device id', async () => {
    const phone = new Phone();
    const challenge = await phone.challenge();
    const res = await post(
      '/api/v1/mobile/verify',
      phone.verifyBody(challenge, { signature: phone.signature(challenge, 'some-other-device') }),
    );
    expectApiError(res, 400, 'invalid_grant');
  });

  it('a wrong password or an unknown user, with the same description', async () => {
    const phone = new Phone();
    const wrong = await phone.verify({ password: 'not the password' });
    expectApiError(wrong, 400, 'invalid_grant');
    expect(wrong.json().error_description).toEqual(REFUSED);
    const unknown = await phone.verify({ username: 'nobody_here' });
    expectApiError(unknown, 400, 'invalid_grant');
    expect(unknown.json().error_description).toBe(wrong.json().error_description);
  });

  it('a disabled user', async () => {
    const bob = await makeUser(t);
    await t.database.db
      .updateTable('users')
      .set({ disabled_at: t.clock.now() })
      .where('id', '=', bob.id)
      .execute();
    const phone = new Phone();
    expectApiError(
      await phone.verify({ username: bob.username, password: bob.password }),
      400,
      'invalid_grant',
    );
  });
});

describe('refresh refuses', () => {
  it('a signature by a key that is not the registered one', async () => {
    const phone = new Phone();
    expect((await phone.verify()).statusCode).toBe(200);
    const intruder = generateKeyPairSync('ed25519');
    const challenge = await phone.challenge();
    const res = await post('/api/v1/mobile/refresh', {
      client_id: appClientId,
      device_id: phone.deviceId,
      refresh_token: phone.refreshToken,
      challenge,
      signature: phone.signature(challenge, phone.deviceId, intruder.privateKey),
    });
    expectApiError(res, 400, 'invalid_grant');
    // Nothing was used up: the real device refreshes with the same refresh token.
    expect((await phone.refresh()).statusCode).toBe(200);
  });

  it("another device's refresh token", async () => {
    const phone = new Phone();
    const other = new Phone();
    expect((await phone.verify()).statusCode).toBe(200);
    expect((await other.verify()).statusCode).toBe(200);
    expectApiError(await phone.refresh({ refresh_token: other.refreshToken }), 400, 'invalid_grant');
    expect((await other.refresh()).statusCode).toBe(200);
  });

  it('a device that never signed in', async () => {
    const phone = new Phone();
    phone.refreshToken = 'rt_unknown';
    expectApiError(await phone.refresh(), 400, 'invalid_grant');
  });

  it('a reused refresh token, and then ends the whole session of the device', async () => {
    const phone = new Phone();
    expect((await phone.verify()).statusCode).toBe(200);
    const stolen = phone.refreshToken;
    expect((await phone.refresh()).statusCode).toBe(200);
    expectApiError(await phone.refresh({ refresh_token: stolen }), 400, 'invalid_grant');
    expectApiError(await bearerGet('/api/v1/me', phone.accessToken), 401, 'invalid_token');
    expectApiError(await phone.refresh(), 400, 'invalid_grant');
  });
});

describe('logout', () => {
  it('needs the bearer token of that device', async () => {
    const phone = new Phone();
    const other = new Phone();
    expect((await phone.verify()).statusCode).toBe(200);
    expect((await other.verify()).statusCode).toBe(200);
    expectApiError(
      await post('/api/v1/mobile/logout', { client_id: appClientId, device_id: phone.deviceId }),
      401,
      'unauthorized',
    );
    expectApiError(await other.logout({ device_id: phone.deviceId }), 400, 'invalid_request');
    expect((await bearerGet('/api/v1/me', phone.accessToken)).statusCode).toBe(200);
  });
});
