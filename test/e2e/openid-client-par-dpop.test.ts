import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { systemClock } from '../../src/lib/clock.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { type Provider, startProvider, UserAgent } from '../docs/helpers.js';
import { makeUser, type TestUser } from '../helpers/factories.js';

/*
 * openid-client 6, the other client library sites use, on the features of docs/oauth.md over HTTP:
 * a pushed authorization request (its `buildAuthorizationUrlWithPAR`, which also sends its DPoP
 * proof to the PAR endpoint), DPoP-bound tokens with its own nonce retries, a DPoP refresh, an
 * EdDSA id_token, its end-session URL honoured without a confirmation page, and proofs of an
 * Ed25519 key, which it names `Ed25519` (RFC 9864), never `EdDSA`.
 */

let provider: Provider;
let user: TestUser;
const REDIRECT_URI = 'http://127.0.0.1:8080/cb';
const SIGNED_OUT = 'http://127.0.0.1:8080/signed-out';

beforeAll(async () => {
  provider = await startProvider();
  user = await makeUser(provider.t);
}, 120_000);
afterAll(() => provider?.close());

describe('openid-client with PAR, DPoP and logout', () => {
  it('signs in through PAR with DPoP-bound tokens, refreshes, and signs out', async () => {
    const ctx: Context = { config: provider.t.config, clock: systemClock };
    const client = await createClient(provider.t.database.db, ctx, {
      name: 'Bank',
      siteUrl: 'https://bank.example',
      redirectUris: [REDIRECT_URI],
      postLogoutRedirectUris: [SIGNED_OUT],
      requirePar: true,
      requireDpop: true,
      idTokenAlg: 'EdDSA',
    });
    const config = await oidc.discovery(
      new URL(provider.issuer),
      client.client_id,
      { id_token_signed_response_alg: 'EdDSA' },
      oidc.ClientSecretBasic(client.client_secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = await oidc.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: REDIRECT_URI,
        scope: 'openid profile offline_access',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      },
      { DPoP },
    );
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);

    const browser = new UserAgent(provider.issuer);
    const arrival = await browser.walk(url, {
      user,
      stopBefore: (next) => next.href.startsWith(REDIRECT_URI),
    });
    const tokens = await oidc.authorizationCodeGrant(
      config,
      arrival.url,
      { pkceCodeVerifier: verifier, expectedState: state },
      undefined,
      { DPoP },
    );
    expect(tokens.token_type).toBe('dpop');
    const claims = tokens.claims();
    expect(claims?.sub).toBe(String(user.id));
    expect(claims?.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const profile = await oidc.fetchUserInfo(config, tokens.access_token, String(user.id), { DPoP });
    expect(profile.preferred_username).toBe(user.username);
    // A bound token without its proof is refused, also through the library's own call.
    await expect(oidc.fetchUserInfo(config, tokens.access_token, String(user.id))).rejects.toThrow();

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string, undefined, {
      DPoP,
    });
    expect(refreshed.token_type).toBe('dpop');
    const again = await oidc.fetchUserInfo(config, refreshed.access_token, String(user.id), { DPoP });
    expect(again.sub).toBe(String(user.id));

    const end = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token as string,
      post_logout_redirect_uri: SIGNED_OUT,
      state: 'bye',
    });
    const out = await browser.request(end);
    expect(out.status).toBe(302);
    expect(out.headers.get('location')).toBe(`${SIGNED_OUT}?state=bye`);
    const account = await browser.request(new URL('/account', provider.issuer));
    expect(account.headers.get('location')).toMatch(/^\/signin/);
  });

  it('binds the tokens to an Ed25519 key, whose proofs it signs with alg "Ed25519" (RFC 9864)', async () => {
    const ctx: Context = { config: provider.t.config, clock: systemClock };
    const client = await createClient(provider.t.database.db, ctx, {
      name: 'Bank with an Ed25519 key',
      siteUrl: 'https://bank.example',
      redirectUris: [REDIRECT_URI],
      requirePar: true,
      requireDpop: true,
    });
    const config = await oidc.discovery(
      new URL(provider.issuer),
      client.client_id,
      undefined,
      oidc.ClientSecretBasic(client.client_secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    expect(config.serverMetadata().dpop_signing_alg_values_supported).toContain('Ed25519');
    // The proofs the library sends, kept to read their header.
    const proofs: string[] = [];
    config[oidc.customFetch] = (url, options) => {
      const proof = new Headers(options.headers as HeadersInit).get('dpop');
      if (proof) proofs.push(proof);
      return fetch(url, options as RequestInit);
    };
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('Ed25519'));
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = await oidc.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: REDIRECT_URI,
        scope: 'openid profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      },
      { DPoP },
    );
    const arrival = await new UserAgent(provider.issuer).walk(url, {
      user,
      stopBefore: (next) => next.href.startsWith(REDIRECT_URI),
    });
    const tokens = await oidc.authorizationCodeGrant(
      config,
      arrival.url,
      { pkceCodeVerifier: verifier, expectedState: state },
      undefined,
      { DPoP },
    );
    expect(tokens.token_type).toBe('dpop');
    const profile = await oidc.fetchUserInfo(config, tokens.access_token, String(user.id), { DPoP });
    expect(profile.preferred_username).toBe(user.username);
    // PAR, token and userinfo proofs, each named with the fully-specified algorithm, never EdDSA.
    expect(proofs.length).toBeGreaterThanOrEqual(3);
    for (const proof of proofs) {
      const header = JSON.parse(Buffer.from(proof.split('.')[0] as string, 'base64url').toString());
      expect(header).toMatchObject({ alg: 'Ed25519', jwk: { kty: 'OKP', crv: 'Ed25519' } });
    }
  });
});
