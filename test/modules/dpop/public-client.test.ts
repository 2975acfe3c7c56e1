import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s256 } from '../../../src/lib/pkce.js';
import { createClient } from '../../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { dpopKey, dpopProof } from '../../helpers/dpop.js';
import {
  depsOf,
  makeClient,
  makeUser,
  mintCode,
  type TestClient,
  type TestUser,
} from '../../helpers/factories.js';
import { authorizeUrl, basic, postForm } from '../../helpers/http.js';

/*
 * Public clients (token_endpoint_auth_method none): client_id alone at the token endpoint, PKCE
 * always, refresh tokens only bound to a DPoP key (RFC 9449 §5), revocation yes, introspection no.
 */

let t: TestApp;
let app: TestClient;
let user: TestUser;

const VERIFIER = 'a-code-verifier-of-at-least-forty-three-characters-0123456789';
const SCOPES = ['openid', 'profile', 'offline_access'];

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

const code = () => mintCode(t, app, user, { scopes: SCOPES, codeChallenge: s256(VERIFIER) });
const token = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(t.app, '/api/v1/oauth/token', { client_id: app.clientId, ...params }, headers);
const exchange = async (headers: Record<string, string> = {}) =>
  token(
    {
      grant_type: 'authorization_code',
      code: await code(),
      redirect_uri: app.redirectUri,
      code_verifier: VERIFIER,
    },
    headers,
  );
const refresh = (refreshToken: string, headers: Record<string, string> = {}) =>
  token({ grant_type: 'refresh_token', refresh_token: refreshToken }, headers);

describe('a public client', () => {
  it('must send a code_challenge to authorize (redirected with invalid_request)', async () => {
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(app, { scope: 'openid' }) });
    expect(res.statusCode).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(location.origin + location.pathname).toBe(app.redirectUri);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/PKCE/);
    const withPkce = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(app, {
        scope: 'openid',
        code_challenge: s256(VERIFIER),
        code_challenge_method: 'S256',
      }),
    });
    expect(new URL(withPkce.headers.location as string, 'http://x').searchParams.get('error')).toBeNull();
  });

  it('gets a refresh token bound to its DPoP key, usable only with a proof of that key', async () => {
    const key = await dpopKey();
    const res = await exchange({ dpop: await dpopProof(t, key) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ token_type: 'DPoP', scope: 'openid profile offline_access' });
    expect(body.refresh_token).toMatch(/^rt_/);

    const withoutProof = await refresh(body.refresh_token);
    expectApiError(withoutProof, 400, 'invalid_grant');
    expect(withoutProof.json().error_description).toMatch(/bound to a DPoP key/);
    const otherKey = await refresh(body.refresh_token, { dpop: await dpopProof(t, await dpopKey()) });
    expectApiError(otherKey, 400, 'invalid_grant');
    expect(otherKey.json().error_description).toMatch(/another key/);

    // The refused attempts neither used the token up nor revoked the grant.
    const rotated = await refresh(body.refresh_token, { dpop: await dpopProof(t, key) });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().token_type).toBe('DPoP');
    // Its successor is bound to the same key.
    const next = await refresh(rotated.json().refresh_token, { dpop: await dpopProof(t, await dpopKey()) });
    expectApiError(next, 400, 'invalid_grant');
    const again = await refresh(rotated.json().refresh_token, { dpop: await dpopProof(t, key) });
    expect(again.statusCode).toBe(200);
  });

  it('gets no refresh token without DPoP, and the scope says so', async () => {
    const res = await exchange();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ token_type: 'Bearer', scope: 'openid profile' });
    expect(res.json().refresh_token).toBeUndefined();
  });

  it('cannot authenticate with a secret, nor exchange a code without its verifier', async () => {
    const withSecret = await token(
      {
        grant_type: 'authorization_code',
        code: await code(),
        redirect_uri: app.redirectUri,
        code_verifier: VERIFIER,
      },
      { authorization: basic({ ...app, clientSecret: 'sk_guess' }) },
    );
    expectApiError(withSecret, 401, 'invalid_client');
    const noVerifier = await token({
      grant_type: 'authorization_code',
      code: await code(),
      redirect_uri: app.redirectUri,
    });
    expectApiError(noVerifier, 400, 'invalid_grant');
  });

  it('pushes its authorization requests by client_id alone, with a code_challenge (RFC 9126 §2)', async () => {
    const push = (params: Record<string, string>) =>
      postForm(t.app, '/api/v1/oauth/par', {
        client_id: app.clientId,
        response_type: 'code',
        redirect_uri: app.redirectUri,
        state: 'st',
        ...params,
      });
    const pushed = await push({ code_challenge: s256(VERIFIER), code_challenge_method: 'S256' });
    expect(pushed.statusCode, pushed.body).toBe(201);
    expect(pushed.json().request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    // The rule of authorize holds at the PAR endpoint too: no PKCE, no request.
    expectApiError(await push({}), 400, 'invalid_request');
  });

  it('may revoke its tokens (RFC 7009) but not introspect them', async () => {
    const key = await dpopKey();
    const tokens = (await exchange({ dpop: await dpopProof(t, key) })).json();
    const introspected = await postForm(t.app, '/api/v1/oauth/introspect', {
      client_id: app.clientId,
      token: tokens.access_token,
    });
    expectApiError(introspected, 401, 'invalid_client');
    const revoked = await postForm(t.app, '/api/v1/oauth/revoke', {
      client_id: app.clientId,
      token: tokens.refresh_token,
    });
    expect(revoked.statusCode).toBe(200);
    expectApiError(
      await refresh(tokens.refresh_token, { dpop: await dpopProof(t, key) }),
      400,
      'invalid_grant',
    );
  });
});

describe('a confidential client', () => {
  it('still needs its secret: client_id alone is invalid_client', async () => {
    const confidential = await makeClient(t);
    const res = await postForm(t.app, '/api/v1/oauth/token', {
      client_id: confidential.clientId,
      grant_type: 'authorization_code',
      code: await mintCode(t, confidential, user),
      redirect_uri: confidential.redirectUri,
    });
    expectApiError(res, 401, 'invalid_client');
  });
});
