import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../../src/lib/secrets.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { makeClient, type TestClient } from '../../helpers/factories.js';
import { basic, postForm } from '../../helpers/http.js';

/* POST /api/v1/oauth/par (RFC 9126 §2): client authentication, the authorize checks as JSON, storage. */

let t: TestApp;
let client: TestClient;
let walletless: TestClient;

const REQUEST_URI = /^urn:ietf:params:oauth:request_uri:([A-Za-z0-9_-]{43})$/;
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t, { wallet: true });
  walletless = await makeClient(t);
});
afterAll(() => t.close());

const valid = (): Record<string, string> => ({
  response_type: 'code',
  redirect_uri: client.redirectUri,
  state: 'st-par',
  scope: 'openid profile',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
  nonce: 'n-par',
});

function push(
  params: Record<string, string | undefined>,
  as: TestClient = client,
): Promise<LightMyRequestResponse> {
  return postForm(t.app, '/api/v1/oauth/par', params, { authorization: basic(as) });
}

async function storedCount(): Promise<number> {
  const row = await t.database.db
    .selectFrom('pushed_authorization_requests')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('POST /api/v1/oauth/par', () => {
  it('answers 201 with a request_uri and expires_in 60, and stores only its hash and the checked parameters', async () => {
    const res = await push({ ...valid(), unknown_parameter: 'ignored' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['expires_in', 'request_uri']);
    expect(body.expires_in).toBe(60);
    const random = REQUEST_URI.exec(body.request_uri)?.[1] as string;
    expect(random).toBeDefined();

    const row = await t.database.db
      .selectFrom('pushed_authorization_requests')
      .selectAll()
      .where('request_uri_hash', '=', hashSecret(random))
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(random);
    expect(row.parameters).toEqual(valid());
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(60_000);
    expect(row.created_at.getTime()).toBe(t.clock.now().getTime());
  });

  it('accepts client_secret_post and never stores the client credentials', async () => {
    const res = await postForm(t.app, '/api/v1/oauth/par', {
      ...valid(),
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(res.statusCode).toBe(201);
    const random = REQUEST_URI.exec(res.json().request_uri)?.[1] as string;
    const row = await t.database.db
      .selectFrom('pushed_authorization_requests')
      .select('parameters')
      .where('request_uri_hash', '=', hashSecret(random))
      .executeTakeFirstOrThrow();
    expect(row.parameters).toEqual(valid());
  });

  it('issues a new request_uri each time', async () => {
    const first = (await push(valid())).json().request_uri;
    const second = (await push(valid())).json().request_uri;
    expect(first).not.toBe(second);
  });

  it.each([
    ['no credentials', {}],
    ['a wrong secret', { authorization: basic({ ...client, clientSecret: 'sk_wrong' }) }],
    ['an unknown client', { authorization: basic({ ...client, clientId: 'pk_unknown' }) }],
    ['a malformed Basic header', { authorization: 'Basic !!!' }],
  ])('refuses %s with 401 invalid_client', async (_name, headers) => {
    const before = await storedCount();
    const res = await postForm(t.app, '/api/v1/oauth/par', valid(), headers);
    expectApiError(res, 401, 'invalid_client');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(await storedCount()).toBe(before);
  });

  it('refuses a disabled client with 401 invalid_client', async () => {
    const disabled = await makeClient(t);
    await t.database.db
      .updateTable('clients')
      .set({ disabled_at: t.clock.now() })
      .where('client_id', '=', disabled.clientId)
      .execute();
    await t.sync();
    expectApiError(
      await push({ ...valid(), redirect_uri: disabled.redirectUri }, disabled),
      401,
      'invalid_client',
    );
  });

  it('refuses two authentication methods at once, and a JSON body', async () => {
    expectApiError(await push({ ...valid(), client_secret: client.clientSecret }), 400, 'invalid_request');
    const json = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/par',
      headers: { authorization: basic(client), 'content-type': 'application/json' },
      payload: JSON.stringify(valid()),
    });
    expectApiError(json, 400, 'invalid_request');
  });

  it.each([
    ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example/callback' }, 'invalid_request'],
    ['no redirect_uri', { redirect_uri: undefined }, 'invalid_request'],
    ['no response_type', { response_type: undefined }, 'invalid_request'],
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['response_mode=fragment', { response_mode: 'fragment' }, 'invalid_request'],
    ['no state', { state: undefined }, 'invalid_request'],
    ['an unknown scope', { scope: 'openid admin' }, 'invalid_scope'],
    ['an empty scope', { scope: ' ' }, 'invalid_scope'],
    ['the plain PKCE method', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a challenge without a method', { code_challenge_method: undefined }, 'invalid_request'],
    ['a malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['an unknown prompt', { prompt: 'select_account' }, 'invalid_request'],
    ['prompt=none with another', { prompt: 'none login' }, 'invalid_request'],
    ['a bad max_age', { max_age: '-1' }, 'invalid_request'],
    [
      'a request_uri (RFC 9126 section 2.1)',
      { request_uri: 'urn:ietf:params:oauth:request_uri:x' },
      'invalid_request',
    ],
    ['a request object', { request: 'eyJhbGciOiJub25lIn0.e30.' }, 'invalid_request'],
  ])('refuses %s as JSON %s, storing nothing', async (_name, change, error) => {
    const before = await storedCount();
    const res = await push({ ...valid(), ...change });
    expectApiError(res, 400, error);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
    expect(await storedCount()).toBe(before);
  });

  it('names request objects and request_uri in its refusal texts', async () => {
    const withUri = (await push({ ...valid(), request_uri: 'urn:ietf:params:oauth:request_uri:x' })).json();
    expect(withUri.error_description).toMatch(/request_uri must not be sent/);
    const withRequest = (await push({ ...valid(), request: 'x' })).json();
    expect(withRequest.error_description).toMatch(/Request objects .* are not supported/);
  });

  it('refuses the wallet scope for a client without the wallet right', async () => {
    const res = await push(
      { ...valid(), redirect_uri: walletless.redirectUri, scope: 'openid wallet' },
      walletless,
    );
    expectApiError(res, 400, 'invalid_scope');
  });

  it('refuses a repeated parameter', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/par',
      headers: { authorization: basic(client), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `${new URLSearchParams(valid())}&state=again`,
    });
    expectApiError(res, 400, 'invalid_request');
  });

  it('is listed in the catalogue as a client-authenticated route, and refuses GET with 405', async () => {
    const catalogue = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json();
    expect(catalogue.routes).toContainEqual({
      method: 'POST',
      path: '/api/v1/oauth/par',
      auth: 'client',
      description: 'Pushed authorization request endpoint (RFC 9126)',
    });
    expectApiError(
      await t.app.inject({ method: 'GET', url: '/api/v1/oauth/par' }),
      405,
      'method_not_allowed',
    );
  });
});

describe('discovery', () => {
  it('publishes the PAR endpoint; PAR is required per client only', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    expect(res.json()).toMatchObject({
      pushed_authorization_request_endpoint: `${t.config.PUBLIC_URL}/api/v1/oauth/par`,
      require_pushed_authorization_requests: false,
      // RFC 9126 §5: a pushed request_uri works regardless; request objects by reference do not.
      request_uri_parameter_supported: false,
      request_parameter_supported: false,
    });
  });
});

describe('the per-client rate limit', () => {
  it('counts PAR requests with the token endpoint under one budget per client', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_TOKEN_PER_MIN: '2' } });
    try {
      const shop = await makeClient(limited);
      const other = await makeClient(limited);
      const par = (as: TestClient) =>
        postForm(
          limited.app,
          '/api/v1/oauth/par',
          { response_type: 'code', redirect_uri: as.redirectUri, state: 's' },
          { authorization: basic(as) },
        );
      expect((await par(shop)).statusCode).toBe(201);
      const token = await postForm(
        limited.app,
        '/api/v1/oauth/token',
        { grant_type: 'authorization_code', code: 'ac_unknown', redirect_uri: shop.redirectUri },
        { authorization: basic(shop) },
      );
      expectApiError(token, 400, 'invalid_grant');
      expectApiError(await par(shop), 429, 'rate_limited');
      expect((await par(other)).statusCode).toBe(201);
    } finally {
      await limited.close();
    }
  });
});
