import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHORIZATION_CODE_TTL_MS } from '../../../src/modules/oauth/authorize/code.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { makeClient, makeUser, mintCode, type TestClient } from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';

/**
 * Lifetimes, pinned from both sides: a code works until just before its 10 minutes ("about
 * 10 minutes") and not after; an access token lives exactly the `expires_in` it announces.
 */
let t: TestApp;
let client: TestClient;
beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t);
});
afterAll(() => t.close());

const TEN_MINUTES_MS = 10 * 60 * 1000;

describe('the authorization code', () => {
  it('lives 10 minutes', () => {
    expect(AUTHORIZATION_CODE_TTL_MS).toBe(TEN_MINUTES_MS);
  });

  it('is redeemed one second before its 10 minutes end', async () => {
    const code = await mintCode(t, client, await makeUser(t));
    t.clock.advance(TEN_MINUTES_MS - 1000);
    expect((await exchangeCode(t.app, client, code)).statusCode).toBe(200);
  });

  it('is refused once its 10 minutes ended', async () => {
    const code = await mintCode(t, client, await makeUser(t));
    t.clock.advance(TEN_MINUTES_MS);
    expectApiError(await exchangeCode(t.app, client, code), 400, 'invalid_grant');
  });
});

describe('an access token from the refresh grant', () => {
  it('is stored with the lifetime it announces: introspection says so, and it ends then', async () => {
    const user = await makeUser(t);
    const first = (
      await exchangeCode(
        t.app,
        client,
        await mintCode(t, client, user, { scopes: ['openid', 'offline_access'] }),
      )
    ).json() as { refresh_token: string };
    const refreshed = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'refresh_token', refresh_token: first.refresh_token },
      { authorization: basic(client) },
    );
    expect(refreshed.statusCode).toBe(200);
    const tokens = refreshed.json() as { access_token: string; expires_in: number };
    expect(tokens.expires_in).toBe(t.config.ACCESS_TOKEN_TTL_SECONDS);

    const introspected = (
      await postForm(
        t.app,
        '/api/v1/oauth/introspect',
        { token: tokens.access_token },
        { authorization: basic(client) },
      )
    ).json() as { active: boolean; exp: number; iat: number };
    expect(introspected.active).toBe(true);
    expect(introspected.exp - introspected.iat).toBe(tokens.expires_in);

    const userinfo = () =>
      t.app.inject({
        method: 'GET',
        url: '/api/v1/oauth/userinfo',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
    t.clock.advance(tokens.expires_in * 1000 - 1000);
    expect((await userinfo()).statusCode).toBe(200);
    t.clock.advance(1000);
    expectApiError(await userinfo(), 401, 'invalid_token');
  });
});
