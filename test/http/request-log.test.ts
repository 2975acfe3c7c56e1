import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { dpopKey, dpopProof } from '../helpers/dpop.js';
import { makeClient, makeUser, mintCode, type TestClient } from '../helpers/factories.js';
import { authorizeUrl, basic, postForm } from '../helpers/http.js';
import { capturedLogger } from '../helpers/log-capture.js';
import { insertAccessToken } from '../helpers/tokens.js';

/*
 * One log line per request, written once it is answered, with its method, redacted URL, status,
 * time and request id, and for a refusal the error code and reason the caller was given; never a
 * secret the request carried.
 */

type Line = Record<string, unknown>;
const { logger, lines: written } = capturedLogger();

let t: TestApp;
let client: TestClient;

beforeAll(async () => {
  t = await createTestApp({ logger });
  t.app.get('/test/boom', { config: { auth: 'public', description: 'A route that fails' } }, async () => {
    throw new Error('boom');
  });
  client = await makeClient(t, { postLogoutRedirectUris: ['https://site.example/bye'] });
});
afterAll(() => t.close());

/** The lines the request answered by `res` wrote, found by its X-Request-Id. */
function linesOf(res: LightMyRequestResponse): Line[] {
  const id = res.headers['x-request-id'];
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  return written.map((text) => JSON.parse(text) as Line).filter((line) => line.reqId === id);
}

/** The one line of the request `res` answered. */
function lineOf(res: LightMyRequestResponse): Line {
  const lines = linesOf(res);
  expect(lines).toHaveLength(1);
  return lines[0] as Line;
}

describe('the request line', () => {
  it('is debug for a passing health probe, which a load balancer sends every few seconds', async () => {
    for (const url of ['/health/live', '/health/ready']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(linesOf(res)).toEqual([]); // nothing at info
    }
  });

  it('is one line per request, with method, URL, status, time, address and request id', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/platform/status',
      remoteAddress: '203.0.113.7',
    });
    expect(res.statusCode).toBe(200);
    const line = lineOf(res);
    expect(line).toMatchObject({
      level: 30,
      msg: 'request completed',
      method: 'GET',
      url: '/api/v1/platform/status',
      statusCode: 200,
      remoteAddress: '203.0.113.7',
    });
    expect(line.responseTime).toBeTypeOf('number');
    expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(written.some((text) => text.includes('incoming request'))).toBe(false);
  });

  it('redacts codes and tokens in the URL', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/no/such?code=ac_secret1&access_token=at_secret2&q=x',
    });
    const line = lineOf(res);
    expect(line.url).toBe('/no/such?code=%5BREDACTED%5D&access_token=%5BREDACTED%5D&q=x');
    expect(written.join('')).not.toMatch(/secret[12]/);
  });

  it('names the user of a bearer token and the client it was issued to', async () => {
    const user = await makeUser(t);
    const token = await insertAccessToken(t.database.db, {
      userId: user.id,
      clientId: client.clientId,
      scopes: ['openid', 'profile'],
      clock: t.clock,
    });
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.statusCode).toBe(200);
    expect(lineOf(res)).toMatchObject({ client_id: client.clientId, user_id: user.id, statusCode: 200 });
    expect(written.join('')).not.toContain(token);
  });
});

describe('a refused authorize request', () => {
  it('answered with the error page: the code and reason, at info', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/authorize?client_id=pk_unknown&response_type=code&state=s',
    });
    expect(res.statusCode).toBe(400);
    expect(lineOf(res)).toMatchObject({
      level: 30,
      statusCode: 400,
      error: 'invalid_request',
      error_description: 'The client_id is not a registered application.',
    });
  });

  it('with a redirect_uri that is not registered', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: authorizeUrl({ clientId: client.clientId, redirectUri: 'https://evil.example/cb' }),
    });
    expect(res.statusCode).toBe(400);
    expect(lineOf(res)).toMatchObject({
      error: 'invalid_request',
      error_description: 'The redirect_uri is not registered for this application.',
    });
  });

  it('answered with an error redirect (a scope, PKCE)', async () => {
    const scope = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(client, { scope: 'openid nonsense' }),
    });
    expect(scope.statusCode).toBe(302);
    expect(new URL(scope.headers.location as string).searchParams.get('error')).toBe('invalid_scope');
    expect(lineOf(scope)).toMatchObject({ level: 30, statusCode: 302, error: 'invalid_scope' });
    expect(lineOf(scope).error_description).toBeTypeOf('string');

    const pkce = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(client, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }),
    });
    expect(pkce.statusCode).toBe(302);
    expect(lineOf(pkce)).toMatchObject({ error: 'invalid_request' });
    expect(String(lineOf(pkce).error_description)).toMatch(/S256/);
  });

  it('with a request_uri that names no pushed request', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/oauth/authorize?${new URLSearchParams({
        client_id: client.clientId,
        request_uri: `urn:ietf:params:oauth:request_uri:${'x'.repeat(43)}`,
      })}`,
    });
    expect(res.statusCode).toBe(400);
    expect(lineOf(res)).toMatchObject({ error: 'request_expired' });
    expect(String(lineOf(res).error_description)).toMatch(/request_uri is unknown/);
  });
});

describe('refusals of the token, introspection, revocation and PAR endpoints', () => {
  it('a wrong client secret: invalid_client and the client_id presented, never the secret or the code', async () => {
    const res = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'authorization_code', code: 'ac_secret3', redirect_uri: client.redirectUri },
      { authorization: basic({ ...client, clientSecret: 'sk_secret4' }) },
    );
    expect(res.statusCode).toBe(401);
    expect(lineOf(res)).toMatchObject({
      level: 30,
      statusCode: 401,
      client_id: client.clientId,
      error: 'invalid_client',
      error_description: expect.any(String),
    });
    const posted = await postForm(t.app, '/api/v1/oauth/token', {
      grant_type: 'authorization_code',
      code: 'ac_secret5',
      client_id: client.clientId,
      client_secret: 'sk_secret6',
    });
    expect(lineOf(posted)).toMatchObject({ error: 'invalid_client', client_id: client.clientId });
    expect(written.join('')).not.toMatch(/secret[3-6]/);

    // docs/operating.md shows this line: the same fields.
    const guide = readFileSync(path.join(import.meta.dirname, '../../docs/operating.md'), 'utf8');
    const shown = /<!-- log:request-line -->\n```json\n(.+)\n```/.exec(guide)?.[1] as string;
    expect(Object.keys(JSON.parse(shown)).sort()).toEqual(Object.keys(lineOf(res)).sort());
  });

  it('a refused grant, DPoP proof, introspection, revocation and pushed request', async () => {
    const auth = { authorization: basic(client) };
    const grant = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'authorization_code', code: 'ac_secret7', redirect_uri: client.redirectUri },
      auth,
    );
    expect(lineOf(grant)).toMatchObject({ statusCode: 400, error: 'invalid_grant' });
    const proof = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'authorization_code', code: 'ac_secret8', redirect_uri: client.redirectUri },
      { ...auth, dpop: 'not.a.proof' },
    );
    expect(lineOf(proof)).toMatchObject({ statusCode: 400, error: 'invalid_dpop_proof' });
    const introspect = await postForm(t.app, '/api/v1/oauth/introspect', { token: 'at_secret9' });
    expect(lineOf(introspect)).toMatchObject({ statusCode: 401, error: 'invalid_client' });
    const revoke = await postForm(t.app, '/api/v1/oauth/revoke', {}, auth);
    expect(lineOf(revoke)).toMatchObject({ statusCode: 400, error: 'invalid_request' });
    const par = await postForm(t.app, '/api/v1/oauth/par', { response_type: 'token' }, auth);
    expect(lineOf(par)).toMatchObject({ statusCode: 400, client_id: client.clientId });
    expect(lineOf(par).error).toBeTypeOf('string');
    expect(written.join('')).not.toMatch(/secret[7-9]/);
    expect(written.join('')).not.toContain(client.clientSecret);
  });
});

describe('refusals of bearer routes and of the logout endpoint', () => {
  it('invalid_token with the rule that refused it, never the token', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: 'Bearer at_secret10' },
    });
    expect(lineOf(res)).toMatchObject({
      level: 30,
      statusCode: 401,
      error: 'invalid_token',
      error_detail: 'unknown access token',
    });
    expect(written.join('')).not.toContain('at_secret10');
  });

  it('invalid_dpop_proof for a bound token with a proof that does not check out, never the proof', async () => {
    const user = await makeUser(t);
    const code = await mintCode(t, client, user, { scopes: ['openid'] });
    const issued = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri },
      { authorization: basic(client), dpop: await dpopProof(t, await dpopKey()) },
    );
    expect(issued.statusCode).toBe(200);
    expect(lineOf(issued)).toMatchObject({ statusCode: 200, client_id: client.clientId });
    const token = issued.json().access_token as string;
    const proof = 'eyJhbGciOiJub25lIn0.eyJzZWNyZXQiOiJwcm9vZjExIn0.';
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `DPoP ${token}`, dpop: proof },
    });
    expect(res.statusCode).toBe(401);
    expect(lineOf(res)).toMatchObject({
      error: 'invalid_dpop_proof',
      error_description: expect.any(String),
      client_id: client.clientId,
      user_id: user.id,
    });
    for (const secret of [code, token, proof, issued.json().refresh_token as string]) {
      expect(written.join('')).not.toContain(secret);
    }
  });

  it('a logout request that does not check out', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/oauth/logout?${new URLSearchParams({ post_logout_redirect_uri: 'https://site.example/bye' })}`,
    });
    expect(res.statusCode).toBe(400);
    expect(lineOf(res)).toMatchObject({ error: 'invalid_request' });
    expect(String(lineOf(res).error_description)).toMatch(/post_logout_redirect_uri needs a client_id/);
  });
});

describe('an unexpected error', () => {
  it('answers 500 with a warn request line, the stack on an error line of its own', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/test/boom' });
    expect(res.statusCode).toBe(500);
    const lines = linesOf(res);
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [50, 'unhandled error'],
      [40, 'request completed'],
    ]);
    expect(lines[1]).toMatchObject({ statusCode: 500, error: 'server_error' });
  });
});
