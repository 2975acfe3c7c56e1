import { describe, expect, it } from 'vitest';
import { disableUser, enableUser } from '../../../src/modules/accounts/accounts.service.js';
import { listSignedInDevices } from '../../../src/modules/mobile/devices.service.js';
import { expectApiError } from '../../helpers/assertions.js';
import { makeUser, mintCode } from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';

import {
  alice,
  appClientId,
  appClientSecret,
  bearerGet,
  Phone,
  setUpMobileApp,
  t,
} from './mobile.fixture.js';

/*
 * Sign-in for the official mobile app (docs/mobile.md): a session from verify to
 * logout, the device bound to its account, disabling, and the session's lifetimes.
 */

setUpMobileApp();

describe('a complete app session', () => {
  it('signs in with a device key, refreshes twice, logs out, and its tokens stop working', async () => {
    const phone = new Phone();

    const signedIn = await phone.verify();
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.headers['cache-control']).toBe('no-store');
    expect(signedIn.json()).toEqual({
      ok: true,
      access_token: expect.stringMatching(/^at_/),
      refresh_token: expect.stringMatching(/^rt_/),
      token_type: 'Bearer',
      expires_in: t.config.ACCESS_TOKEN_TTL_SECONDS,
      scope: 'openid profile email verified',
      user: expect.objectContaining({
        id: alice.id,
        sub: String(alice.id),
        username: alice.username,
        email: `${alice.username}@example.com`,
        verification_level: 1,
      }),
    });

    // Tokens from the app work like any other on the bearer routes.
    const me = await bearerGet('/api/v1/me', phone.accessToken);
    expect(me.statusCode).toBe(200);
    expect(me.json().user).toEqual(signedIn.json().user);
    expect((await bearerGet('/api/v1/oauth/userinfo', phone.accessToken)).statusCode).toBe(200);
    expect((await bearerGet('/api/v1/premium/status', phone.accessToken)).statusCode).toBe(200);

    for (let round = 0; round < 2; round++) {
      const before = { access: phone.accessToken, refresh: phone.refreshToken };
      const refreshed = await phone.refresh();
      expect(refreshed.statusCode, refreshed.body).toBe(200);
      expect(refreshed.json()).toMatchObject({
        ok: true,
        token_type: 'Bearer',
        scope: 'openid profile email verified',
      });
      expect(phone.accessToken).not.toBe(before.access);
      expect(phone.refreshToken).not.toBe(before.refresh);
      // The previous access token stops working; the new one works.
      expectApiError(await bearerGet('/api/v1/me', before.access), 401, 'invalid_token');
      expect((await bearerGet('/api/v1/me', phone.accessToken)).statusCode).toBe(200);
    }

    const loggedOut = await phone.logout();
    expect(loggedOut.statusCode).toBe(200);
    expect(loggedOut.json()).toEqual({ ok: true });
    expectApiError(await bearerGet('/api/v1/me', phone.accessToken), 401, 'invalid_token');
    expectApiError(await bearerGet('/api/v1/oauth/userinfo', phone.accessToken), 401, 'invalid_token');
    // The key is no longer registered: a refresh is refused even with the last refresh token.
    expectApiError(await phone.refresh(), 400, 'invalid_grant');
    // A new sign-in after logout registers the key again.
    expect((await phone.verify()).statusCode).toBe(200);
    expect((await bearerGet('/api/v1/me', phone.accessToken)).statusCode).toBe(200);
  });

  it('a second sign-in on the same device replaces the first: its tokens stop working', async () => {
    const phone = new Phone();
    expect((await phone.verify()).statusCode).toBe(200);
    const first = phone.accessToken;
    expect((await phone.verify()).statusCode).toBe(200);
    expectApiError(await bearerGet('/api/v1/me', first), 401, 'invalid_token');
    expect((await bearerGet('/api/v1/me', phone.accessToken)).statusCode).toBe(200);
  });
});

describe('a device belongs to the account signed in on it', () => {
  it("another account's verify with the same device_id is refused, and the owner stays signed in", async () => {
    const bob = await makeUser(t);
    const owners = new Phone();
    expect((await owners.verify()).statusCode).toBe(200);
    // Another installation claiming the same device_id, with bob's own key and password.
    const intruder = new Phone(appClientId, owners.deviceId);
    const refused = await intruder.verify({ username: bob.username, password: bob.password });
    expectApiError(refused, 400, 'invalid_request');
    expect(refused.json().error_description).toMatch(/another account/);
    expect((await bearerGet('/api/v1/me', owners.accessToken)).statusCode).toBe(200);
    expect((await owners.refresh()).statusCode).toBe(200);
    // Once the owner signs out on the device, another account may sign in on it.
    expect((await owners.logout()).statusCode).toBe(200);
    expect((await intruder.verify({ username: bob.username, password: bob.password })).statusCode).toBe(200);
  });
});

describe('disabling ends device sessions', () => {
  it('a disabled user is signed out on every device: enabled again, no device is left signed in', async () => {
    const dora = await makeUser(t);
    const phone = new Phone();
    expect((await phone.verify({ username: dora.username, password: dora.password })).statusCode).toBe(200);
    await disableUser(t.database.db, { config: t.config, clock: t.clock }, { username: dora.username });
    await enableUser(t.database.db, { config: t.config, clock: t.clock }, { username: dora.username });
    await t.sync();
    expect(await listSignedInDevices(t.database.db, dora.id)).toEqual([]);
    expectApiError(await bearerGet('/api/v1/me', phone.accessToken), 401, 'invalid_token');
    expectApiError(await phone.refresh(), 400, 'invalid_grant');
    // The device is free again: another account may sign in on it.
    const other = new Phone(appClientId, phone.deviceId);
    expect((await other.verify()).statusCode).toBe(200);
  });
});

describe('mobile and OAuth refresh tokens stay on their own routes', () => {
  const official = () => ({
    clientId: appClientId,
    clientSecret: appClientSecret,
    redirectUri: 'https://id.example/app',
  });

  it("a device's refresh token is refused at the token endpoint, even with the app's secret", async () => {
    const phone = new Phone();
    expect((await phone.verify()).statusCode).toBe(200);
    const res = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'refresh_token', refresh_token: phone.refreshToken },
      { authorization: basic(official()) },
    );
    expectApiError(res, 400, 'invalid_grant');
    expect(res.json().error_description).toMatch(/mobile/);
    // Nothing was used up: the device still refreshes with its signature.
    expect((await phone.refresh()).statusCode).toBe(200);
    expect((await bearerGet('/api/v1/me', phone.accessToken)).statusCode).toBe(200);
  });

  it('an OAuth refresh token is refused at the mobile refresh, and keeps working where it belongs', async () => {
    const phone = new Phone();
    expect((await phone.verify()).statusCode).toBe(200);
    const code = await mintCode(t, official(), alice, {
      scopes: ['openid', 'offline_access'],
      redirectUri: 'https://id.example/app',
    });
    const tokens = (await exchangeCode(t.app, official(), code)).json() as { refresh_token: string };
    expectApiError(await phone.refresh({ refresh_token: tokens.refresh_token }), 400, 'invalid_grant');
    const res = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      { authorization: basic(official()) },
    );
    expect(res.statusCode).toBe(200);
  });
});

describe('lifetimes of a device session', () => {
  const official = () => ({
    clientId: appClientId,
    clientSecret: appClientSecret,
    redirectUri: 'https://id.example/app',
  });

  it('its access token is stored with the lifetime it announces: introspection says so, and it ends then', async () => {
    const start = t.clock.now();
    try {
      const phone = new Phone();
      const res = await phone.verify();
      const expiresIn = (res.json() as { expires_in: number }).expires_in;
      expect(expiresIn).toBe(t.config.ACCESS_TOKEN_TTL_SECONDS);
      const introspected = (
        await postForm(
          t.app,
          '/api/v1/oauth/introspect',
          { token: phone.accessToken },
          { authorization: basic(official()) },
        )
      ).json() as { active: boolean; exp: number; iat: number };
      expect(introspected.active).toBe(true);
      expect(introspected.exp - introspected.iat).toBe(expiresIn);
      t.clock.advance(expiresIn * 1000 - 1000);
      expect((await bearerGet('/api/v1/me', phone.accessToken)).statusCode).toBe(200);
      t.clock.advance(1000);
      expectApiError(await bearerGet('/api/v1/me', phone.accessToken), 401, 'invalid_token');
    } finally {
      t.clock.set(start);
    }
  });

  it('its refresh token works until it expires, and not after', async () => {
    const start = t.clock.now();
    try {
      const lifetimeMs = t.config.REFRESH_TOKEN_TTL_SECONDS * 1000;
      const early = new Phone();
      expect((await early.verify()).statusCode).toBe(200);
      t.clock.advance(lifetimeMs - 1000);
      expect((await early.refresh()).statusCode).toBe(200);

      t.clock.set(start);
      const late = new Phone();
      expect((await late.verify()).statusCode).toBe(200);
      t.clock.advance(lifetimeMs);
      expectApiError(await late.refresh(), 400, 'invalid_grant');
    } finally {
      t.clock.set(start);
    }
  });
});
