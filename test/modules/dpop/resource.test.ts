import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credit } from '../../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { type DpopKey, dpopKey, dpopProof, resourceProof, serverNonce } from '../../helpers/dpop.js';
import {
  depsOf,
  makeClient,
  makeUser,
  mintCode,
  type TestClient,
  type TestUser,
} from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';

/* RFC 9449 §7: DPoP-bound access tokens on the bearer routes (userinfo, /me, the wallet). */

let t: TestApp;
let client: TestClient;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t, { wallet: true });
  user = await makeUser(t);
});
afterAll(() => t.close());

const SCOPES = ['openid', 'profile', 'wallet'];

/** An access token bound to `key`, from the token endpoint. */
async function boundToken(key: DpopKey): Promise<string> {
  const res = await postForm(
    t.app,
    '/api/v1/oauth/token',
    {
      grant_type: 'authorization_code',
      code: await mintCode(t, client, user, { scopes: SCOPES }),
      redirect_uri: client.redirectUri,
    },
    { authorization: basic(client), dpop: await dpopProof(t, key) },
  );
  expect(res.json().token_type).toBe('DPoP');
  return res.json().access_token;
}

async function bearerToken(): Promise<string> {
  return (await exchangeCode(t.app, client, await mintCode(t, client, user, { scopes: SCOPES }))).json()
    .access_token;
}

const userinfo = (headers: Record<string, string>, method: 'GET' | 'POST' = 'GET') =>
  t.app.inject({ method, url: '/api/v1/oauth/userinfo', headers });

describe('a DPoP-bound access token', () => {
  it('works as "Authorization: DPoP" with a proof carrying ath, and the answer carries DPoP-Nonce', async () => {
    const key = await dpopKey();
    const token = await boundToken(key);
    const res = await userinfo({ authorization: `DPoP ${token}`, dpop: await resourceProof(t, key, token) });
    expect(res.statusCode).toBe(200);
    expect(res.json().sub).toBe(String(user.id));
    expect(res.headers['dpop-nonce']).toBe(serverNonce(t));
    // The scheme name is case-insensitive (RFC 9110 section 11.1); /me takes it too.
    const me = await t.app.inject({
      method: 'GET',
      url: '/api/v1/me',
      headers: {
        authorization: `dpop ${token}`,
        dpop: await resourceProof(t, key, token, { path: '/api/v1/me' }),
      },
    });
    expect(me.statusCode).toBe(200);
  });

  it('asks for the nonce with 401 use_dpop_nonce, WWW-Authenticate DPoP and DPoP-Nonce', async () => {
    const key = await dpopKey();
    const token = await boundToken(key);
    const res = await userinfo({
      authorization: `DPoP ${token}`,
      dpop: await resourceProof(t, key, token, { nonce: null }),
    });
    expectApiError(res, 401, 'use_dpop_nonce');
    expect(res.headers['dpop-nonce']).toBe(serverNonce(t));
    const retry = await userinfo({
      authorization: `DPoP ${token}`,
      dpop: await resourceProof(t, key, token, { nonce: res.headers['dpop-nonce'] as string }),
    });
    expect(retry.statusCode).toBe(200);
  });

  it('is refused as a Bearer token (invalid_token), from the database and from the token cache', async () => {
    const key = await dpopKey();
    const token = await boundToken(key);
    const asBearer = await userinfo({ authorization: `Bearer ${token}` });
    expectApiError(asBearer, 401, 'invalid_token');
    expect(asBearer.headers['www-authenticate']).toContain('DPoP realm="idp", algs="ES256 EdDSA Ed25519"');
    // Once a DPoP request has put it in the cache, the cached entry still knows its key.
    const ok = await userinfo({ authorization: `DPoP ${token}`, dpop: await resourceProof(t, key, token) });
    expect(ok.statusCode).toBe(200);
    expectApiError(await userinfo({ authorization: `Bearer ${token}` }), 401, 'invalid_token');
  });

  it('refuses a proof for another URL or method, a replayed proof, a wrong ath, another key, or none', async () => {
    const key = await dpopKey();
    const token = await boundToken(key);
    const auth = `DPoP ${token}`;
    const otherUrl = await resourceProof(t, key, token, { path: '/api/v1/me' });
    expectApiError(await userinfo({ authorization: auth, dpop: otherUrl }), 401, 'invalid_dpop_proof');
    const otherMethod = await resourceProof(t, key, token, { method: 'POST' });
    expectApiError(await userinfo({ authorization: auth, dpop: otherMethod }), 401, 'invalid_dpop_proof');
    const proof = await resourceProof(t, key, token);
    expect((await userinfo({ authorization: auth, dpop: proof })).statusCode).toBe(200);
    const replayed = await userinfo({ authorization: auth, dpop: proof });
    expectApiError(replayed, 401, 'invalid_dpop_proof');
    expect(replayed.json().error_description).toMatch(/already used/);
    const wrongAth = await resourceProof(t, key, 'at_another-token');
    expectApiError(await userinfo({ authorization: auth, dpop: wrongAth }), 401, 'invalid_dpop_proof');
    const noAth = await dpopProof(t, key, {
      htm: 'GET',
      htu: `${t.config.PUBLIC_URL}/api/v1/oauth/userinfo`,
    });
    expectApiError(await userinfo({ authorization: auth, dpop: noAth }), 401, 'invalid_dpop_proof');
    const otherKey = await resourceProof(t, await dpopKey(), token);
    const refused = await userinfo({ authorization: auth, dpop: otherKey });
    expectApiError(refused, 401, 'invalid_token');
    expect(refused.headers['www-authenticate']).toMatch(
      /^Bearer realm="idp", DPoP realm="idp", error="invalid_token"/,
    );
    expectApiError(await userinfo({ authorization: auth }), 401, 'invalid_dpop_proof');
  });

  it('pays a wallet charge with DPoP, and the charge is refused without the proof', async () => {
    await credit(t.database.db, depsOf(t).ctx, { username: user.username, amount: 10 });
    const key = await dpopKey('EdDSA');
    const token = await boundToken(key);
    const charge = async (headers: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/wallet/charge',
        headers,
        payload: { amount: 2.5, currency: 'COIN', description: 'A sword', idempotency_key: 'dpop-1' },
      });
    expectApiError(await charge({ authorization: `Bearer ${token}` }), 401, 'invalid_token');
    const paid = await charge({
      authorization: `DPoP ${token}`,
      dpop: await resourceProof(t, key, token, { method: 'POST', path: '/api/v1/wallet/charge' }),
    });
    expect(paid.statusCode).toBe(201);
    expect(paid.json().balance).toBe(7.5);
  });
});

describe('an unbound access token', () => {
  it('keeps working as Bearer, and is refused with the DPoP scheme', async () => {
    const token = await bearerToken();
    const plain = await userinfo({ authorization: `Bearer ${token}` });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['dpop-nonce']).toBeUndefined();
    const key = await dpopKey();
    const res = await userinfo({ authorization: `DPoP ${token}`, dpop: await resourceProof(t, key, token) });
    expectApiError(res, 401, 'invalid_token');
    expect(res.json().error_description).toMatch(/not bound/);
  });

  it('is refused with 401 unauthorized and both challenges when no credential is sent', async () => {
    const res = await userinfo({});
    expectApiError(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe(
      'Bearer realm="idp", DPoP realm="idp", algs="ES256 EdDSA Ed25519"',
    );
  });
});

describe('the replay store', () => {
  it('records a proof only for a working bound token', async () => {
    const key = await dpopKey();
    const count = async () =>
      (await t.database.db.selectFrom('dpop_proofs').select('proof_hash').execute()).length;
    const before = await count();
    const unknown = 'at_not-a-token-of-ours';
    expectApiError(
      await userinfo({ authorization: `DPoP ${unknown}`, dpop: await resourceProof(t, key, unknown) }),
      401,
      'invalid_token',
    );
    const unbound = await bearerToken();
    expectApiError(
      await userinfo({ authorization: `DPoP ${unbound}`, dpop: await resourceProof(t, key, unbound) }),
      401,
      'invalid_token',
    );
    expect(await count()).toBe(before);
    const bound = await boundToken(key);
    const afterTokenRequest = await count();
    expect(afterTokenRequest).toBe(before + 1);
    expect(
      (await userinfo({ authorization: `DPoP ${bound}`, dpop: await resourceProof(t, key, bound) }))
        .statusCode,
    ).toBe(200);
    expect(await count()).toBe(afterTokenRequest + 1);
  });
});
