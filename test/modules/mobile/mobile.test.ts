import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableUser, enableUser } from '../../../src/modules/accounts/accounts.service.js';
import { createClient, updateClient } from '../../../src/modules/clients/clients.service.js';
import { listSignedInDevices } from '../../../src/modules/mobile/mobile.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { Browser } from '../../helpers/browser.js';
import {
  basic,
  depsOf,
  exchangeCode,
  makeClient,
  makeUser,
  mintCode,
  postForm,
  type TestClient,
  type TestUser,
} from '../../helpers/oauth.js';

/*
 * Sign-in for the official mobile app (CONTRACT.md §6, docs/mobile.md), driven the way the app
 * does it: an Ed25519 key pair made with Node's own crypto, challenges signed over
 * `<challenge>.<device_id>`, tokens used on the ordinary bearer routes.
 */

let t: TestApp;
let appClientId: string;
let appClientSecret: string;
let thirdParty: TestClient;
let alice: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  const official = await createClient(t.database.db, depsOf(t).ctx, {
    name: 'Official app',
    siteUrl: 'https://id.example',
    redirectUris: ['https://id.example/app'],
    officialMobile: true,
  });
  appClientId = official.client_id;
  appClientSecret = official.client_secret;
  thirdParty = await makeClient(t);
  alice = await makeUser(t);
});
afterAll(() => t.close());

function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', 'user-agent': 'TestPhone/1.0 (Android 15)', ...headers },
    payload: JSON.stringify(body),
  });
}

function bearerGet(url: string, token: string): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
}

let deviceCount = 0;

/** One installation of the app: its device id and its own key pair. */
class Phone {
  private readonly keys = generateKeyPairSync('ed25519');
  accessToken = '';
  refreshToken = '';

  constructor(
    readonly clientId = appClientId,
    readonly deviceId = `device-${++deviceCount}-${Math.random().toString(36).slice(2, 10)}`,
  ) {}

  /** The raw 32-byte public key, base64url without padding. */
  get publicKey(): string {
    return this.keys.publicKey.export({ format: 'jwk' }).x as string;
  }

  signature(challenge: string, deviceId = this.deviceId, key: KeyObject = this.keys.privateKey): string {
    return sign(null, Buffer.from(`${challenge}.${deviceId}`, 'utf8'), key).toString('base64url');
  }

  async challenge(deviceId = this.deviceId): Promise<string> {
    const res = await post('/api/v1/mobile/challenge', { client_id: this.clientId, device_id: deviceId });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { ok: boolean; challenge: string; expires_in: number };
    expect(body).toEqual({ ok: true, challenge: expect.any(String), expires_in: expect.any(Number) });
    expect(body.expires_in).toBeGreaterThan(0);
    expect(body.expires_in).toBeLessThanOrEqual(120);
    return body.challenge;
  }

  verifyBody(challenge: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      client_id: this.clientId,
      device_id: this.deviceId,
      challenge,
      signature: this.signature(challenge),
      public_key: this.publicKey,
      username: alice.username,
      password: alice.password,
      ...overrides,
    };
  }

  async verify(overrides: Record<string, unknown> = {}): Promise<LightMyRequestResponse> {
    const res = await post('/api/v1/mobile/verify', this.verifyBody(await this.challenge(), overrides));
    if (res.statusCode === 200) this.keep(res);
    return res;
  }

  async refresh(overrides: Record<string, unknown> = {}): Promise<LightMyRequestResponse> {
    const challenge = await this.challenge();
    const res = await post('/api/v1/mobile/refresh', {
      client_id: this.clientId,
      device_id: this.deviceId,
      refresh_token: this.refreshToken,
      challenge,
      signature: this.signature(challenge),
      ...overrides,
    });
    if (res.statusCode === 200) this.keep(res);
    return res;
  }

  logout(body: Record<string, unknown> = {}): Promise<LightMyRequestResponse> {
    return post(
      '/api/v1/mobile/logout',
      { client_id: this.clientId, device_id: this.deviceId, ...body },
      { authorization: `Bearer ${this.accessToken}` },
    );
  }

  private keep(res: LightMyRequestResponse): void {
    const body = res.json() as { access_token: string; refresh_token: string };
    this.accessToken = body.access_token;
    this.refreshToken = body.refresh_token;
  }
}

const REFUSED = expect.stringMatching(/refused/);

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
    await disableUser(t.database.db, t.clock, dora.username);
    await enableUser(t.database.db, t.clock, dora.username);
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
    const spare = await createClient(t.database.db, depsOf(t).ctx, {
      name: 'Spare app',
      siteUrl: 'https://id.example',
      redirectUris: ['https://id.example/spare'],
      officialMobile: true,
    });
    const phone = new Phone(spare.client_id);
    await phone.challenge();
    await updateClient(t.database.db, depsOf(t).ctx, spare.client_id, { disabled: true });
    expectApiError(
      await post('/api/v1/mobile/challenge', { client_id: spare.client_id, device_id: phone.deviceId }),
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
