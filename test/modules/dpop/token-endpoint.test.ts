import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateClient } from '../../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { dpopKey, dpopProof, serverNonce } from '../../helpers/dpop.js';
import {
  depsOf,
  makeClient,
  makeUser,
  mintCode,
  type TestClient,
  type TestUser,
} from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';

/* RFC 9449 §5, §6, §8 at the token endpoint: tokens bound to the proof's key, nonces, single use. */

let t: TestApp;
let client: TestClient;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t);
  user = await makeUser(t);
});
afterAll(() => t.close());

const SCOPES = ['openid', 'profile', 'offline_access'];
const code = () => mintCode(t, client, user, { scopes: SCOPES });
const introspect = async (token: string) =>
  (await postForm(t.app, '/api/v1/oauth/introspect', { token }, { authorization: basic(client) })).json();
const refresh = (refreshToken: string, headers: Record<string, string> = {}) =>
  postForm(
    t.app,
    '/api/v1/oauth/token',
    { grant_type: 'refresh_token', refresh_token: refreshToken },
    { authorization: basic(client), ...headers },
  );

function expectNonce(res: LightMyRequestResponse): void {
  expect(res.headers['dpop-nonce']).toBe(serverNonce(t));
}

describe('the token endpoint with a DPoP proof', () => {
  it('binds the access token to the key: token_type DPoP, introspection cnf.jkt', async () => {
    const key = await dpopKey();
    const exchanged = await exchangeCode(t.app, client, await code());
    expect(exchanged.json().token_type).toBe('Bearer');
    expect(exchanged.headers['dpop-nonce']).toBeUndefined();

    const bound = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(client),
        dpop: await dpopProof(t, key),
      },
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code: await code(),
        redirect_uri: client.redirectUri,
      }).toString(),
    });
    expect(bound.statusCode).toBe(200);
    expectNonce(bound);
    const body = bound.json();
    expect(body.token_type).toBe('DPoP');
    expect(await introspect(body.access_token)).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt: key.jkt },
    });
    // RFC 9449 §5: a confidential client's refresh token is not bound.
    const refreshInfo = await introspect(body.refresh_token);
    expect(refreshInfo).toMatchObject({ active: true, token_type: 'refresh_token' });
    expect(refreshInfo.cnf).toBeUndefined();
    // An unbound access token says nothing of a key.
    expect((await introspect(exchanged.json().access_token)).cnf).toBeUndefined();
  });

  it('asks for its nonce (400 use_dpop_nonce with DPoP-Nonce), then accepts the retry', async () => {
    const key = await dpopKey('EdDSA');
    const codeForDpop = await code();
    const send = (proof: string) =>
      postForm(
        t.app,
        '/api/v1/oauth/token',
        { grant_type: 'authorization_code', code: codeForDpop, redirect_uri: client.redirectUri },
        { authorization: basic(client), dpop: proof },
      );
    const withoutNonce = await send(await dpopProof(t, key, { nonce: null }));
    expectApiError(withoutNonce, 400, 'use_dpop_nonce');
    expectNonce(withoutNonce);
    const staleNonce = await send(await dpopProof(t, key, { nonce: 'not-the-nonce' }));
    expectApiError(staleNonce, 400, 'use_dpop_nonce');
    // The code was not used up by the refused requests.
    const retried = await send(
      await dpopProof(t, key, { nonce: withoutNonce.headers['dpop-nonce'] as string }),
    );
    expect(retried.statusCode).toBe(200);
    expect(retried.json().token_type).toBe('DPoP');
  });

  it('still accepts the previous window nonce after it rotates, and not the one before', async () => {
    const key = await dpopKey();
    const nonce = serverNonce(t);
    t.clock.advance(6 * 60_000);
    const ok = await refresh('rt_unknown', { dpop: await dpopProof(t, key, { nonce }) });
    expectApiError(ok, 400, 'invalid_grant'); // the proof passed; the refresh token is unknown
    t.clock.advance(5 * 60_000);
    const stale = await refresh('rt_unknown', { dpop: await dpopProof(t, key, { nonce }) });
    expectApiError(stale, 400, 'use_dpop_nonce');
  });

  it('refuses a proof used twice, a proof for another URL or method, and an invalid one', async () => {
    const key = await dpopKey();
    const proof = await dpopProof(t, key);
    const once = await refresh('rt_unknown', { dpop: proof });
    expectApiError(once, 400, 'invalid_grant');
    const twice = await refresh('rt_unknown', { dpop: proof });
    expectApiError(twice, 400, 'invalid_dpop_proof');
    expect(twice.json().error_description).toMatch(/already used/);
    expectNonce(twice);
    const otherUrl = await dpopProof(t, key, { htu: `${t.config.PUBLIC_URL}/api/v1/oauth/userinfo` });
    expectApiError(await refresh('rt_unknown', { dpop: otherUrl }), 400, 'invalid_dpop_proof');
    expectApiError(
      await refresh('rt_unknown', { dpop: await dpopProof(t, key, { htm: 'GET' }) }),
      400,
      'invalid_dpop_proof',
    );
    expectApiError(await refresh('rt_unknown', { dpop: 'garbage' }), 400, 'invalid_dpop_proof');
  });

  it('binds the access token of a refresh to the key of its proof; without one it is a bearer token', async () => {
    const first = await dpopKey();
    const second = await dpopKey();
    const tokens = (await exchangeCode(t.app, client, await code())).json();
    const bound = await refresh(tokens.refresh_token, { dpop: await dpopProof(t, first) });
    expect(bound.statusCode).toBe(200);
    expect(bound.json().token_type).toBe('DPoP');
    expect((await introspect(bound.json().access_token)).cnf).toEqual({ jkt: first.jkt });
    // The confidential client's refresh token is not bound: another key, or none, may follow.
    const rebound = await refresh(bound.json().refresh_token, { dpop: await dpopProof(t, second) });
    expect((await introspect(rebound.json().access_token)).cnf).toEqual({ jkt: second.jkt });
    const plain = await refresh(rebound.json().refresh_token);
    expect(plain.json().token_type).toBe('Bearer');
  });
});

describe('--require-dpop (dpop_bound_access_tokens)', () => {
  it('refuses a token request without a proof with invalid_grant, and accepts one with a proof', async () => {
    const strict = await makeClient(t);
    await updateClient(t.database.db, depsOf(t).ctx, strict.clientId, { requireDpop: true });
    await t.sync();
    const denied = await exchangeCode(t.app, strict, await mintCode(t, strict, user, { scopes: SCOPES }));
    expectApiError(denied, 400, 'invalid_grant');
    expect(denied.json().error_description).toMatch(/DPoP proof/);
    const withProof = await postForm(
      t.app,
      '/api/v1/oauth/token',
      {
        grant_type: 'authorization_code',
        code: await mintCode(t, strict, user, { scopes: SCOPES }),
        redirect_uri: strict.redirectUri,
      },
      { authorization: basic(strict), dpop: await dpopProof(t, await dpopKey()) },
    );
    expect(withProof.statusCode).toBe(200);
    expect(withProof.json().token_type).toBe('DPoP');
    // A refresh without a proof is refused too.
    expectApiError(
      await postForm(
        t.app,
        '/api/v1/oauth/token',
        { grant_type: 'refresh_token', refresh_token: withProof.json().refresh_token },
        { authorization: basic(strict) },
      ),
      400,
      'invalid_grant',
    );
    // Turned off again (the client cache learns it at once), a plain request works.
    await updateClient(t.database.db, depsOf(t).ctx, strict.clientId, { requireDpop: false });
    await t.sync();
    const plain = await exchangeCode(t.app, strict, await mintCode(t, strict, user, { scopes: SCOPES }));
    expect(plain.json().token_type).toBe('Bearer');
  });
});
