import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import {
  makeClient,
  makeOfficialApp,
  makeUser,
  type TestClient,
  type TestUser,
} from '../../helpers/factories.js';

/*
 * What the mobile test files share: the app with the official client, and a phone driven the way
 * the app does it: an Ed25519 key pair made with Node's own crypto, challenges signed over
 * `<challenge>.<device_id>`, tokens used on the ordinary bearer routes.
 */

export let t: TestApp;
export let appClientId: string;
export let appClientSecret: string;
export let thirdParty: TestClient;
export let alice: TestUser;

/** A fresh app with the official app's client, a third-party client and a user. */
export function setUpMobileApp(env: Record<string, string> = {}): void {
  beforeAll(async () => {
    t = await createTestApp({ env });
    const official = await makeOfficialApp(t);
    appClientId = official.clientId;
    appClientSecret = official.clientSecret;
    thirdParty = await makeClient(t);
    alice = await makeUser(t);
  });
  afterAll(() => t.close());
}

export function post(
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

export function bearerGet(url: string, token: string): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
}

let deviceCount = 0;

/** One installation of the app: its device id and its own key pair. */
export class Phone {
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

export const REFUSED = expect.stringMatching(/refused/);
