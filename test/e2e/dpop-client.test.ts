import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { type Provider, startProvider, UserAgent } from '../docs/helpers.js';
import { depsOf, makeUser, type TestUser } from '../helpers/factories.js';

/*
 * panva's oauth4webapi drives a public client over HTTP: authorization code with PKCE, the token
 * request with DPoP, userinfo with DPoP, and refresh with DPoP, retrying on use_dpop_nonce as its
 * documentation shows (isDPoPNonceError). The server requires a nonce on every DPoP request.
 * With an Ed25519 key the library names its proofs' algorithm `Ed25519` (RFC 9864), never `EdDSA`.
 */

let provider: Provider;
let user: TestUser;
let client: oauth.Client;
const redirectUri = 'http://127.0.0.1:9/callback';

beforeAll(async () => {
  provider = await startProvider();
  user = await makeUser(provider.t);
  const created = await createClient(provider.t.database.db, depsOf(provider.t).ctx, {
    name: 'Phone app',
    siteUrl: 'http://127.0.0.1:9',
    redirectUris: [redirectUri],
    isPublic: true,
  });
  client = { client_id: created.client_id };
});
afterAll(() => provider.close());

/** Runs `request`, and once more if the server asked for a DPoP nonce (the handle keeps it). */
async function withNonceRetry<T>(request: () => Promise<T>): Promise<{ result: T; retried: boolean }> {
  try {
    return { result: await request(), retried: false };
  } catch (error) {
    if (!oauth.isDPoPNonceError(error)) throw error;
    return { result: await request(), retried: true };
  }
}

describe('oauth4webapi with DPoP against the provider', () => {
  it('exchanges a code, reads userinfo and refreshes, all bound to one key', async () => {
    const insecure = { [oauth.allowInsecureRequests]: true };
    const issuer = new URL(provider.issuer);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    expect(as.dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA', 'Ed25519']);
    const clientAuth = oauth.None();
    const keyPair = await oauth.generateKeyPair('ES256');
    const DPoP = oauth.DPoP(client, keyPair);

    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorize = new URL(as.authorization_endpoint as string);
    authorize.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid profile offline_access',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }).toString();
    const arrival = await new UserAgent(provider.issuer).walk(authorize, {
      user,
      stopBefore: (url) => url.href.startsWith(redirectUri),
    });
    const params = oauth.validateAuthResponse(as, client, arrival.url, state);

    // The first token request has no nonce yet: the server answers use_dpop_nonce.
    const exchange = await withNonceRetry(async () =>
      oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, codeVerifier, {
          DPoP,
          ...insecure,
        }),
      ),
    );
    expect(exchange.retried).toBe(true);
    const tokens = exchange.result;
    expect(tokens.token_type).toBe('dpop');
    expect(tokens.refresh_token).toMatch(/^rt_/);
    const claims = oauth.getValidatedIdTokenClaims(tokens);
    expect(claims?.sub).toBe(String(user.id));

    // The token response brought the next nonce: userinfo succeeds at once.
    const info = await withNonceRetry(async () =>
      oauth.processUserInfoResponse(
        as,
        client,
        String(user.id),
        await oauth.userInfoRequest(as, client, tokens.access_token, { DPoP, ...insecure }),
      ),
    );
    expect(info.retried).toBe(false);
    expect(info.result.preferred_username).toBe(user.username);

    const refreshed = await withNonceRetry(async () =>
      oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token as string, {
          DPoP,
          ...insecure,
        }),
      ),
    );
    expect(refreshed.result.token_type).toBe('dpop');
    const again = await oauth.processUserInfoResponse(
      as,
      client,
      String(user.id),
      await oauth.userInfoRequest(as, client, refreshed.result.access_token, { DPoP, ...insecure }),
    );
    expect(again.sub).toBe(String(user.id));

    // The refresh token is bound: another key cannot use it.
    const thief = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const stolen = () =>
      withNonceRetry(async () =>
        oauth.processRefreshTokenResponse(
          as,
          client,
          await oauth.refreshTokenGrantRequest(
            as,
            client,
            clientAuth,
            refreshed.result.refresh_token as string,
            {
              DPoP: thief,
              ...insecure,
            },
          ),
        ),
      );
    await expect(stolen()).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('binds the tokens to an Ed25519 key, whose proofs it signs with alg "Ed25519" (RFC 9864)', async () => {
    const insecure = { [oauth.allowInsecureRequests]: true };
    const issuer = new URL(provider.issuer);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const keyPair = await oauth.generateKeyPair('Ed25519');
    const DPoP = oauth.DPoP(client, keyPair);
    // The proofs the library sends, kept to read their header.
    const proofs: string[] = [];
    const recording = {
      ...insecure,
      [oauth.customFetch]: (url: string, init: RequestInit) => {
        const proof = new Headers(init.headers).get('dpop');
        if (proof) proofs.push(proof);
        return fetch(url, init);
      },
    };

    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorize = new URL(as.authorization_endpoint as string);
    authorize.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid profile',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }).toString();
    const arrival = await new UserAgent(provider.issuer).walk(authorize, {
      user,
      stopBefore: (url) => url.href.startsWith(redirectUri),
    });
    const params = oauth.validateAuthResponse(as, client, arrival.url, state);
    const { result: tokens } = await withNonceRetry(async () =>
      oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(
          as,
          client,
          oauth.None(),
          params,
          redirectUri,
          codeVerifier,
          { DPoP, ...recording },
        ),
      ),
    );
    expect(tokens.token_type).toBe('dpop');
    const info = await withNonceRetry(async () =>
      oauth.processUserInfoResponse(
        as,
        client,
        String(user.id),
        await oauth.userInfoRequest(as, client, tokens.access_token, { DPoP, ...recording }),
      ),
    );
    expect(info.result.sub).toBe(String(user.id));
    // Every proof named the fully-specified algorithm, never EdDSA.
    expect(proofs.length).toBeGreaterThanOrEqual(2);
    for (const proof of proofs) {
      const header = JSON.parse(Buffer.from(proof.split('.')[0] as string, 'base64url').toString());
      expect(header).toMatchObject({ alg: 'Ed25519', jwk: { kty: 'OKP', crv: 'Ed25519' } });
    }
  });
});
