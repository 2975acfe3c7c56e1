import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { systemClock } from '../../src/lib/clock.js';
import { createRegistrationToken } from '../../src/modules/developer-apps/registration-tokens.service.js';
import { type Provider, startProvider, UserAgent } from '../docs/helpers.js';
import { makeUser, type TestUser } from '../helpers/factories.js';

/*
 * openid-client 6 registers a client itself (RFC 7591, its `dynamicClientRegistration`, from the
 * `registration_endpoint` of discovery) with an initial access token made for a site owner, then
 * signs that owner in through the pages with the registered client (the authorization code flow
 * with PKCE, its secret sent as client_secret_post, the library's default) and reads userinfo.
 * Under CLIENT_REGISTRATION=approval (the default) the unreviewed client signs in its owner.
 */

let provider: Provider;
let owner: TestUser;
const REDIRECT_URI = 'http://127.0.0.1:8080/cb';

beforeAll(async () => {
  provider = await startProvider();
  owner = await makeUser(provider.t);
}, 120_000);
afterAll(() => provider?.close());

async function initialAccessToken(ownerUserId: number): Promise<string> {
  const ctx: Context = { config: provider.t.config, clock: systemClock };
  const { token } = await createRegistrationToken(provider.t.database.db, ctx, {
    ownerUserId,
    createdBy: `user:${ownerUserId}`,
  });
  return token;
}

async function signIn(config: oidc.Configuration, scope: string) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const arrival = await new UserAgent(provider.issuer).walk(url, {
    user: owner,
    stopBefore: (next) => next.href.startsWith(REDIRECT_URI),
  });
  return oidc.authorizationCodeGrant(config, arrival.url, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
  });
}

describe('openid-client dynamic registration', () => {
  it('registers a confidential client with an initial access token and signs its owner in with it', async () => {
    const config = await oidc.dynamicClientRegistration(
      new URL(provider.issuer),
      {
        client_name: 'Registered site',
        client_uri: 'https://registered.example',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
      undefined,
      { initialAccessToken: await initialAccessToken(owner.id), execute: [oidc.allowInsecureRequests] },
    );
    const metadata = config.clientMetadata();
    expect(metadata.client_id).toMatch(/^pk_/);
    expect(metadata.client_secret).toMatch(/^sk_/);
    expect(metadata.registration_access_token).toMatch(/^rat_/);

    const tokens = await signIn(config, 'openid profile email offline_access');
    expect(tokens.claims()?.sub).toBe(String(owner.id));
    expect(tokens.claims()?.aud).toBe(metadata.client_id);
    const profile = await oidc.fetchUserInfo(config, tokens.access_token, String(owner.id));
    expect(profile).toMatchObject({
      preferred_username: owner.username,
      email: `${owner.username}@example.com`,
    });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.access_token).toMatch(/^at_/);

    // RFC 7592: its registration access token reads the registration, and deletes it; the client
    // then signs no one in, and its tokens stop.
    const uri = String(metadata.registration_client_uri);
    const auth = { authorization: `Bearer ${String(metadata.registration_access_token)}` };
    const read = await fetch(uri, { headers: auth });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({
      client_id: metadata.client_id,
      client_name: 'Registered site',
    });
    expect((await fetch(uri, { method: 'DELETE', headers: auth })).status).toBe(204);
    await expect(oidc.fetchUserInfo(config, refreshed.access_token, String(owner.id))).rejects.toThrow();
  });

  it('registers a public client (token_endpoint_auth_method none) that signs in with PKCE alone', async () => {
    const config = await oidc.dynamicClientRegistration(
      new URL(provider.issuer),
      {
        client_uri: 'https://app.example',
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'none',
      },
      oidc.None(),
      { initialAccessToken: await initialAccessToken(owner.id), execute: [oidc.allowInsecureRequests] },
    );
    expect(config.clientMetadata().client_secret).toBeUndefined();
    const tokens = await signIn(config, 'openid profile');
    const profile = await oidc.fetchUserInfo(config, tokens.access_token, String(owner.id));
    expect(profile.preferred_username).toBe(owner.username);
  });

  it('is refused without an initial access token', async () => {
    await expect(
      oidc.dynamicClientRegistration(
        new URL(provider.issuer),
        { client_uri: 'https://app.example', redirect_uris: [REDIRECT_URI] },
        undefined,
        { execute: [oidc.allowInsecureRequests] },
      ),
    ).rejects.toMatchObject({ status: 401 });
  });
});
