import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DpopProofRefused, verifyDpopProof } from '../../../src/modules/dpop/dpop-proof.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { dpopKey, dpopProof, resourceProof } from '../../helpers/dpop.js';
import { makeClient, makeUser, mintCode, type TestClient, type TestUser } from '../../helpers/factories.js';
import { basic } from '../../helpers/http.js';

/*
 * RFC 9864 §2.2 deprecates the polymorphic `EdDSA` for the fully-specified `Ed25519`, and
 * oauth4webapi and openid-client sign their Ed25519 proofs with that name only: a proof is accepted
 * under either name, both mean the same key, and discovery lists both (docs/oauth.md, DPoP).
 */

let t: TestApp;
let client: TestClient;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t);
  user = await makeUser(t);
});
afterAll(() => t.close());

const TOKEN_URL = () => `${t.config.PUBLIC_URL}/api/v1/oauth/token`;
const check = (proof: string) =>
  verifyDpopProof(proof, { method: 'POST', url: TOKEN_URL(), now: t.clock.now() });

describe('a DPoP proof with alg Ed25519', () => {
  it('verifies, with the thumbprint of its key, the same as under EdDSA', async () => {
    const key = await dpopKey('EdDSA');
    const named = await check(await dpopProof(t, key, { jti: 'ed-1', header: { alg: 'Ed25519' } }));
    expect(named).toMatchObject({ jkt: key.jkt, jti: 'ed-1' });
    const polymorphic = await check(await dpopProof(t, key, { jti: 'ed-2' }));
    expect(polymorphic.jkt).toBe(named.jkt);
  });

  it('is refused with a P-256 key, as ES256 is with an Ed25519 key', async () => {
    const p256 = await dpopKey('ES256');
    const { publicKey } = await generateKeyPair('Ed25519', { extractable: true });
    const ed25519Jwk = await exportJWK(publicKey);
    // Signed by an Ed25519 key, but naming a P-256 public key: no Ed25519 verification of it.
    const edWithP256 = await dpopProof(t, await dpopKey('EdDSA'), {
      header: { alg: 'Ed25519', jwk: p256.publicJwk },
    });
    await expect(check(edWithP256)).rejects.toBeInstanceOf(DpopProofRefused);
    const esWithEd = await dpopProof(t, p256, { header: { jwk: ed25519Jwk } });
    await expect(check(esWithEd)).rejects.toBeInstanceOf(DpopProofRefused);
  });

  it('binds tokens at the token endpoint and is accepted at userinfo', async () => {
    const key = await dpopKey('EdDSA');
    const fullySpecified = { header: { alg: 'Ed25519' } };
    const exchanged = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(client),
        dpop: await dpopProof(t, key, fullySpecified),
      },
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code: await mintCode(t, client, user, { scopes: ['openid', 'profile'] }),
        redirect_uri: client.redirectUri,
      }).toString(),
    });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    const { access_token: accessToken, token_type: tokenType } = exchanged.json();
    expect(tokenType).toBe('DPoP');
    const info = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: {
        authorization: `DPoP ${accessToken}`,
        dpop: await resourceProof(t, key, accessToken, fullySpecified),
      },
    });
    expect(info.statusCode, info.body).toBe(200);
    expect(info.json().sub).toBe(String(user.id));
  });

  it('is listed in discovery and in the DPoP challenge beside EdDSA', async () => {
    const doc = (await t.app.inject('/.well-known/openid-configuration')).json();
    expect(doc.dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA', 'Ed25519']);
    const challenge = await t.app.inject('/api/v1/oauth/userinfo');
    expect(challenge.headers['www-authenticate']).toContain('algs="ES256 EdDSA Ed25519"');
  });
});
