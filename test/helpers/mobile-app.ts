import { generateKeyPairSync, sign } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.js';
import { makeOfficialApp } from './factories.js';

/** Mobile verify as the official app on one phone sends it: `verify(deviceId, username, password)`. */
export type MobileVerify = (
  deviceId: string,
  username: string,
  password: string,
) => Promise<LightMyRequestResponse>;

/**
 * The official app, registered on `t`, on a phone with its own Ed25519 key: each call takes a
 * fresh challenge and signs it, then verifies the password through the mobile routes.
 */
export async function officialAppOn(t: TestApp): Promise<MobileVerify> {
  const app = await makeOfficialApp(t);
  const keys = generateKeyPairSync('ed25519');
  return async (deviceId, username, password) => {
    const challenge = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/mobile/challenge',
        payload: { client_id: app.clientId, device_id: deviceId },
      })
    ).json().challenge as string;
    return t.app.inject({
      method: 'POST',
      url: '/api/v1/mobile/verify',
      payload: {
        client_id: app.clientId,
        device_id: deviceId,
        challenge,
        signature: sign(null, Buffer.from(`${challenge}.${deviceId}`), keys.privateKey).toString('base64url'),
        public_key: keys.publicKey.export({ format: 'jwk' }).x,
        username,
        password,
      },
    });
  };
}
