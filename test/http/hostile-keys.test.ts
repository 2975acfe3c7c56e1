import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s256 } from '../../src/lib/pkce.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { keptProofKeyCount } from '../../src/modules/dpop/dpop-proof.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { dpopKey, dpopProof, resourceProof } from '../helpers/dpop.js';
import { depsOf, makeUser, mintCode, type TestClient, type TestUser } from '../helpers/factories.js';
import { postForm } from '../helpers/http.js';

/*
 * What a stranger's requests leave in the process. A DPoP proof needs nothing but a key made for
 * it, and a public client's token endpoint nothing but its public client_id: so a proof that
 * merely verifies must not keep its key imported (each kept key holds some 4.5 KB of OpenSSL's
 * memory, outside V8's heap; 10,000 of them kept ~44 MiB for good). Only a key whose request
 * succeeded is kept: tokens issued to it, or a working token bound to it.
 */

let t: TestApp;
let app: TestClient;
let user: TestUser;
const VERIFIER = 'a-code-verifier-of-at-least-forty-three-characters-0123456789';

beforeAll(async () => {
  t = await createTestApp();
  const created = await createClient(t.database.db, depsOf(t).ctx, {
    name: 'Phone app',
    siteUrl: 'https://app.example',
    redirectUris: ['https://app.example/cb'],
    isPublic: true,
  });
  app = { clientId: created.client_id, clientSecret: '', redirectUri: 'https://app.example/cb' };
  user = await makeUser(t);
});
afterAll(() => t.close());

const token = (params: Record<string, string>, proof: string) =>
  postForm(t.app, '/api/v1/oauth/token', { client_id: app.clientId, ...params }, { dpop: proof });

describe('DPoP proof keys kept imported', () => {
  it('none for proofs that verify but whose requests fail, whatever their number', async () => {
    const before = keptProofKeyCount();
    for (let i = 0; i < 200; i++) {
      const res = await token(
        { grant_type: 'refresh_token', refresh_token: `rt_stranger${i}` },
        await dpopProof(t, await dpopKey(i % 2 === 0 ? 'ES256' : 'EdDSA')),
      );
      expect(res.statusCode).toBe(400);
    }
    expect(keptProofKeyCount()).toBe(before);
  });

  it('the key of a successful token request, once, and used again for its resource requests', async () => {
    const before = keptProofKeyCount();
    const key = await dpopKey();
    const code = await mintCode(t, app, user, {
      scopes: ['openid', 'profile'],
      codeChallenge: s256(VERIFIER),
    });
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, code_verifier: VERIFIER },
      await dpopProof(t, key),
    );
    expect(res.statusCode).toBe(200);
    expect(keptProofKeyCount()).toBe(before + 1);
    const accessToken = res.json().access_token as string;
    for (let i = 0; i < 3; i++) {
      const userinfo = await t.app.inject({
        method: 'GET',
        url: '/api/v1/oauth/userinfo',
        headers: {
          authorization: `DPoP ${accessToken}`,
          dpop: await resourceProof(t, key, accessToken),
        },
      });
      expect(userinfo.statusCode).toBe(200);
    }
    expect(keptProofKeyCount()).toBe(before + 1);
  });
});
