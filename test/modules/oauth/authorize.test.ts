import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s256 } from '../../../src/lib/pkce.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { makeClient, type TestClient } from '../../helpers/factories.js';

let t: TestApp;
let client: TestClient;
let walletless: TestClient;

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t, {
    wallet: true,
    redirectUris: [
      'https://site.example/callback',
      'http://127.0.0.1:8080/cb',
      'https://site.example/cb?tenant=7',
    ],
  });
  walletless = await makeClient(t);
});
afterAll(() => t.close());

function authorize(params: Record<string, string | string[] | undefined>, cookie?: string) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const item of [value].flat()) if (item !== undefined) query.append(name, item);
  }
  return t.app.inject({
    method: 'GET',
    url: `/api/v1/oauth/authorize?${query}`,
    headers: cookie ? { cookie } : {},
  });
}

const valid = () => ({
  client_id: client.clientId,
  redirect_uri: 'https://site.example/callback',
  response_type: 'code',
  state: 'xyz',
});

function expectErrorPage(res: LightMyRequestResponse): void {
  expect(res.statusCode).toBe(400);
  expect(res.headers.location).toBeUndefined();
  expect(res.headers['content-type']).toMatch(/^text\/html/);
}

function expectErrorRedirect(
  res: LightMyRequestResponse,
  error: string,
  base = 'https://site.example/callback',
): URL {
  expect(res.statusCode).toBe(302);
  const location = new URL(res.headers.location as string);
  expect(`${location.origin}${location.pathname}`).toBe(base);
  expect(location.searchParams.get('error')).toBe(error);
  expect(location.searchParams.get('error_description')).toBeTruthy();
  expect(location.searchParams.get('iss')).toBe(t.config.PUBLIC_URL);
  return location;
}

describe('authorize: client and redirect_uri problems render a page and never redirect', () => {
  it.each([
    ['no client_id', { client_id: undefined }],
    ['an unknown client_id', { client_id: 'pk_unknown' }],
    ['a repeated client_id', { client_id: ['x', 'y'] }],
    ['no redirect_uri', { redirect_uri: undefined }],
    ['a trailing slash', { redirect_uri: 'https://site.example/callback/' }],
    ['another case', { redirect_uri: 'https://SITE.example/callback' }],
    ['an added query', { redirect_uri: 'https://site.example/callback?x=1' }],
    ['a userinfo part', { redirect_uri: 'https://user@site.example/callback' }],
    ['dot segments', { redirect_uri: 'https://site.example/x/../callback' }],
    ['a fragment', { redirect_uri: 'https://site.example/callback#x' }],
    ['another port on a non-loopback host', { redirect_uri: 'https://site.example:8443/callback' }],
    ['another loopback path', { redirect_uri: 'http://127.0.0.1:9000/other' }],
    ['another loopback host', { redirect_uri: 'http://localhost:8080/cb' }],
    ['a loopback port above 65535', { redirect_uri: 'http://127.0.0.1:99999/cb' }],
    ['a loopback port of six digits', { redirect_uri: 'http://127.0.0.1:808080/cb' }],
    ['an unregistered https URI', { redirect_uri: 'https://evil.example/callback' }],
    [
      'a repeated redirect_uri',
      { redirect_uri: ['https://site.example/callback', 'https://site.example/callback'] },
    ],
  ])('%s', async (_name, change) => {
    expectErrorPage(await authorize({ ...valid(), ...change }));
  });

  it('a disabled client', async () => {
    const disabled = await makeClient(t);
    await t.database.db
      .updateTable('clients')
      .set({ disabled_at: t.clock.now() })
      .where('client_id', '=', disabled.clientId)
      .execute();
    expectErrorPage(await authorize({ ...valid(), client_id: disabled.clientId }));
  });
});

describe('authorize: everything after that redirects back with error, state and iss', () => {
  it('accepts a loopback redirect URI on another port (RFC 8252 §7.3) and keeps a registered query', async () => {
    const loopback = await authorize({
      ...valid(),
      redirect_uri: 'http://127.0.0.1:51234/cb',
      prompt: 'none',
    });
    const location = expectErrorRedirect(loopback, 'login_required', 'http://127.0.0.1:51234/cb');
    expect(location.searchParams.get('state')).toBe('xyz');
    const withQuery = await authorize({
      ...valid(),
      redirect_uri: 'https://site.example/cb?tenant=7',
      prompt: 'none',
    });
    const back = expectErrorRedirect(withQuery, 'login_required', 'https://site.example/cb');
    expect(back.searchParams.get('tenant')).toBe('7');
  });

  it('requires state', async () => {
    const location = expectErrorRedirect(
      await authorize({ ...valid(), state: undefined }),
      'invalid_request',
    );
    expect(location.searchParams.has('state')).toBe(false);
  });

  it('requires response_type=code', async () => {
    expectErrorRedirect(await authorize({ ...valid(), response_type: undefined }), 'invalid_request');
    const token = expectErrorRedirect(
      await authorize({ ...valid(), response_type: 'token' }),
      'unsupported_response_type',
    );
    expect(token.searchParams.get('state')).toBe('xyz');
  });

  it('refuses repeated parameters', async () => {
    expectErrorRedirect(await authorize({ ...valid(), scope: ['openid', 'profile'] }), 'invalid_request');
    expectErrorRedirect(await authorize({ ...valid(), response_type: ['code', 'code'] }), 'invalid_request');
  });

  it('refuses unknown scopes, an empty scope and wallet without the right', async () => {
    expectErrorRedirect(await authorize({ ...valid(), scope: 'openid admin' }), 'invalid_scope');
    expectErrorRedirect(await authorize({ ...valid(), scope: '' }), 'invalid_scope');
    expectErrorRedirect(
      await authorize({ ...valid(), client_id: walletless.clientId, scope: 'openid wallet' }),
      'invalid_scope',
    );
    // With the right, wallet passes the checks (and the user must sign in).
    const ok = await authorize({ ...valid(), scope: 'openid wallet' });
    expect(ok.statusCode).toBe(302);
    expect(ok.headers.location).toMatch(/^\/signin\?request=/);
  });

  it('refuses PKCE plain, a method without a challenge, and a malformed challenge', async () => {
    const challenge = s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk');
    expectErrorRedirect(
      await authorize({ ...valid(), code_challenge: challenge, code_challenge_method: 'plain' }),
      'invalid_request',
    );
    expectErrorRedirect(await authorize({ ...valid(), code_challenge: challenge }), 'invalid_request');
    expectErrorRedirect(await authorize({ ...valid(), code_challenge_method: 'S256' }), 'invalid_request');
    expectErrorRedirect(
      await authorize({ ...valid(), code_challenge: 'short', code_challenge_method: 'S256' }),
      'invalid_request',
    );
  });

  it('refuses unknown prompt values and none combined with another', async () => {
    expectErrorRedirect(await authorize({ ...valid(), prompt: 'select_account' }), 'invalid_request');
    expectErrorRedirect(await authorize({ ...valid(), prompt: 'none login' }), 'invalid_request');
  });

  it('refuses request objects and other response modes', async () => {
    expectErrorRedirect(await authorize({ ...valid(), request: 'eyJ' }), 'request_not_supported');
    expectErrorRedirect(await authorize({ ...valid(), response_mode: 'form_post' }), 'invalid_request');
  });

  it('answers prompt=none without a session with login_required', async () => {
    expectErrorRedirect(await authorize({ ...valid(), prompt: 'none' }), 'login_required');
  });

  it('sends a signed-out user to sign in, carrying the request', async () => {
    const res = await authorize({ ...valid(), nonce: 'n-1' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toMatch(/^\/signin\?request=[A-Za-z0-9_-]{43}$/);
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('native apps', () => {
  it('refuses registering a custom scheme for an https site, and allows it for a non-https one', async () => {
    await expect(makeClient(t, { redirectUris: ['com.example.app:/cb'] })).rejects.toMatchObject({
      error: 'invalid_request',
    });
    const native = await makeClient(t, {
      siteUrl: 'http://localhost:3000',
      redirectUris: ['com.example.app:/cb'],
    });
    const res = await authorize({
      ...valid(),
      client_id: native.clientId,
      redirect_uri: 'com.example.app:/cb',
      prompt: 'none',
    });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toMatch(/^com\.example\.app:\/cb\?error=login_required/);
  });
});
