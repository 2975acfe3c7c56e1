import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SigningAlgorithm } from '../../../src/lib/signing-algorithms.js';
import { createClient, updateClient } from '../../../src/modules/clients/clients.service.js';
import { type Provider, startProvider, UserAgent } from '../../docs/helpers.js';
import { depsOf, makeUser, type TestUser } from '../../helpers/factories.js';

/*
 * Each client's id_tokens are signed with its `id_token_signed_response_alg`,
 * checked the way sites check them: openid-client 6 on the whole flow over HTTP (discovery, the
 * sign-in and consent pages filled by a browser without a page engine, the code exchange, the
 * id_token's signature against the JWKS), and jose against the published JWKS.
 */

let provider: Provider;
let user: TestUser;
let browser: UserAgent;

const REDIRECT_URI = 'http://127.0.0.1:8080/cb';

beforeAll(async () => {
  provider = await startProvider();
  user = await makeUser(provider.t);
  browser = new UserAgent(provider.issuer);
});
afterAll(() => provider.close());

interface Registered {
  clientId: string;
  clientSecret: string;
}

async function register(idTokenAlg?: SigningAlgorithm): Promise<Registered> {
  const created = await createClient(provider.t.database.db, depsOf(provider.t).ctx, {
    name: `Site ${idTokenAlg ?? 'default'}`,
    siteUrl: 'https://site.example',
    redirectUris: [REDIRECT_URI],
    ...(idTokenAlg ? { idTokenAlg } : {}),
  });
  return { clientId: created.client_id, clientSecret: created.client_secret };
}

/**
 * A sign-in through openid-client as a site registered with `metadataAlg` runs it: the browser
 * walks authorize, sign-in and consent up to the redirect, then openid-client redeems the code and
 * checks the id_token, its signature included (`enableNonRepudiationChecks`: against the JWKS).
 */
async function signIn(client: Registered, metadataAlg: SigningAlgorithm | undefined) {
  const config = await oidc.discovery(
    new URL(provider.issuer),
    client.clientId,
    metadataAlg ? { id_token_signed_response_alg: metadataAlg } : undefined,
    oidc.ClientSecretBasic(client.clientSecret),
    { execute: [oidc.allowInsecureRequests] },
  );
  oidc.enableNonRepudiationChecks(config);
  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
    state,
  });
  const arrival = await browser.walk(url, {
    user,
    stopBefore: (next) => next.href.startsWith(`${REDIRECT_URI}?`),
  });
  expect(arrival.url.searchParams.has('code')).toBe(true);
  return oidc.authorizationCodeGrant(config, arrival.url, {
    pkceCodeVerifier: verifier,
    expectedNonce: nonce,
    expectedState: state,
  });
}

async function publishedJwks(): Promise<JSONWebKeySet> {
  const res = await provider.t.app.inject({ method: 'GET', url: '/api/v1/oauth/jwks' });
  expect(res.statusCode).toBe(200);
  return res.json() as JSONWebKeySet;
}

/** What the id_token says, checked by jose against the JWKS for `alg` alone. */
async function checkedByJose(idToken: string, clientId: string, alg: SigningAlgorithm) {
  const jwks = await publishedJwks();
  const { payload, protectedHeader } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
    issuer: provider.issuer,
    audience: clientId,
    algorithms: [alg],
  });
  // The key of that algorithm that signs now: the newest of its keys, listed first among them.
  const current = jwks.keys.find((key) => key.alg === alg);
  expect(protectedHeader).toEqual({ alg, kid: current?.kid, typ: 'JWT' });
  return payload;
}

/** OIDC Core §3.1.3.6: the left half of the hash of the access token, base64url. */
function atHash(accessToken: string, hash: 'sha256' | 'sha512'): string {
  const digest = createHash(hash).update(accessToken).digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

describe('openid-client 6 and id_tokens of each algorithm', () => {
  for (const [alg, hash] of [
    ['ES256', 'sha256'],
    ['EdDSA', 'sha512'],
    ['RS256', 'sha256'],
  ] as const) {
    it(`validates the ${alg} id_token of a client registered with ${alg}`, async () => {
      const client = await register(alg);
      const tokens = await signIn(client, alg);
      const claims = tokens.claims();
      expect(claims).toMatchObject({ iss: provider.issuer, aud: client.clientId, sub: String(user.id) });
      const idToken = tokens.id_token as string;
      const payload = await checkedByJose(idToken, client.clientId, alg);
      expect(payload.at_hash).toBe(atHash(tokens.access_token, hash));
    });
  }

  it('signs RS256 for a client registered without an algorithm', async () => {
    const client = await register();
    const tokens = await signIn(client, 'RS256');
    expect(decodeProtectedHeader(tokens.id_token as string).alg).toBe('RS256');
  });

  it('a site expecting RS256 refuses the ES256 id_token of a client registered with ES256', async () => {
    // openid-client checks the header against id_token_signed_response_alg (OIDC Core §3.1.3.7
    // step 7): a site must declare the algorithm it registered.
    const client = await register('ES256');
    const refused = await signIn(client, 'RS256').then(
      () => undefined,
      (error: unknown) => error as Error & { cause?: Error & { cause?: unknown } },
    );
    expect(refused?.cause?.message).toBe('unexpected JWT "alg" header parameter');
    expect(refused?.cause?.cause).toMatchObject({ expected: 'RS256', header: { alg: 'ES256' } });
  });

  it('a changed algorithm signs the next id_token, on a running server with the client cached', async () => {
    const client = await register('RS256');
    // The first exchange puts the client in the server's client cache.
    expect(decodeProtectedHeader((await signIn(client, 'RS256')).id_token as string).alg).toBe('RS256');
    const { db } = provider.t.database;
    const view = await updateClient(db, depsOf(provider.t).ctx, client.clientId, { idTokenAlg: 'EdDSA' });
    expect(view.id_token_signed_response_alg).toBe('EdDSA');
    await provider.t.sync();
    const tokens = await signIn(client, 'EdDSA');
    await checkedByJose(tokens.id_token as string, client.clientId, 'EdDSA');
  });
});

describe('registering an algorithm', () => {
  it('refuses an algorithm we do not sign with, and leaves the client as it was', async () => {
    const ctx = depsOf(provider.t).ctx;
    const db = provider.t.database.db;
    const base = { name: 'Bad', siteUrl: 'https://site.example', redirectUris: [REDIRECT_URI] };
    for (const alg of ['HS256', 'none', 'es256']) {
      await expect(
        createClient(db, ctx, { ...base, idTokenAlg: alg as SigningAlgorithm }),
      ).rejects.toMatchObject({
        error: 'invalid_request',
        // RFC 6749 §5.2 leaves `"` out of error_description: the value is quoted with `'`.
        description: `id_token_signed_response_alg must be RS256, ES256 or EdDSA (spelled exactly), got '${alg}'`,
      });
    }
    const client = await register('ES256');
    await expect(
      updateClient(db, ctx, client.clientId, { idTokenAlg: 'PS256' as SigningAlgorithm }),
    ).rejects.toMatchObject({ error: 'invalid_request' });
    const row = await db
      .selectFrom('clients')
      .select('id_token_signed_response_alg')
      .where('client_id', '=', client.clientId)
      .executeTakeFirstOrThrow();
    expect(row.id_token_signed_response_alg).toBe('ES256');
    // The column refuses one written around the service (migrations/0022).
    await expect(
      db
        .updateTable('clients')
        .set({ id_token_signed_response_alg: 'HS256' as SigningAlgorithm })
        .where('client_id', '=', client.clientId)
        .execute(),
    ).rejects.toMatchObject({ code: '23514' });
  });
});
