import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser } from '../helpers/browser.js';
import { makeClient, makeUser, type TestClient } from '../helpers/factories.js';

/*
 * Security headers on every page and answer, HSTS on https, no CORS, and URLs that never follow a
 * spoofed Host or X-Forwarded-Host.
 */

let t: TestApp;
let client: TestClient;

beforeAll(async () => {
  t = await createTestApp({ env: { PUBLIC_URL: 'https://id.example', TRUST_PROXY: 'true' } });
  client = await makeClient(t);
});
afterAll(() => t.close());

function expectPageHeaders(res: LightMyRequestResponse, name: string): void {
  expect(res.headers['content-type'], name).toMatch(/^text\/html/);
  const csp = String(res.headers['content-security-policy']);
  expect(csp, name).toContain("default-src 'none'");
  expect(csp, name).toContain("frame-ancestors 'none'");
  // Forms post only here (and, on an app's request pages, to its redirect_uri: test/web/csp-form-action.test.ts).
  expect(csp, name).toMatch(/(^|; )form-action 'self'( [^;]+)?(;|$)/);
  expect(csp, name).not.toMatch(/unsafe-inline|unsafe-eval|script-src [^;]*\*/);
  expect(res.headers['x-frame-options'], name).toBe('DENY');
  expect(res.headers['referrer-policy'], name).toBe('no-referrer');
  expect(res.headers['cache-control'], name).toBe('no-store');
  expect(res.headers['x-content-type-options'], name).toBe('nosniff');
  expect(res.headers['strict-transport-security'], name).toMatch(/max-age=31536000/);
  expect(res.headers['access-control-allow-origin'], name).toBeUndefined();
}

describe('pages', () => {
  it('carry the strict header set: sign-in, sign-up, account, consent and error pages', async () => {
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    expectPageHeaders(await browser.get('/signin'), 'sign-in');
    expectPageHeaders(await browser.get('/signup'), 'sign-up');
    await browser.submit('/signin', '/signin', { username: user.username, password: user.password });
    expectPageHeaders(await browser.get('/account'), 'account');
    const consent = await browser.get(
      `/api/v1/oauth/authorize?response_type=code&client_id=${client.clientId}&redirect_uri=${encodeURIComponent(client.redirectUri)}&scope=openid&state=s`,
    );
    expect(consent.statusCode).toBe(200);
    expectPageHeaders(consent, 'consent');
    const error = await browser.get('/api/v1/oauth/authorize?response_type=code&client_id=pk_unknown');
    expect(error.statusCode).toBe(400);
    expectPageHeaders(error, 'error');
  });
});

describe('every answer', () => {
  it('has HSTS on https, nosniff, no CORS', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/platform/status',
      headers: { origin: 'https://evil.example' },
    });
    expect(res.headers['strict-transport-security']).toMatch(/max-age=31536000; includeSubDomains/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('errors and unknown paths included, each with its own request id', async () => {
    const answers = [
      await t.app.inject({ method: 'GET', url: '/no/such/path' }),
      await t.app.inject({ method: 'GET', url: '/api/v1/oauth/userinfo' }),
      await t.app.inject({ method: 'GET', url: '/api/v1/platform/status' }),
    ];
    expect(answers.map((res) => res.statusCode)).toEqual([404, 401, 200]);
    for (const res of answers) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
      expect(res.headers['strict-transport-security']).toMatch(/max-age=31536000/);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(new Set(answers.map((res) => res.headers['x-request-id'])).size).toBe(3);
  });

  it('has no HSTS when the service is on http', async () => {
    const plain = await createTestApp({ env: { PUBLIC_URL: 'http://localhost:3000' } });
    try {
      const res = await plain.app.inject({ method: 'GET', url: '/api/v1/platform/status' });
      expect(res.headers['strict-transport-security']).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});

describe('a spoofed Host or X-Forwarded-Host', () => {
  const spoofed = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' };

  it('changes nothing in the discovery document', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/.well-known/openid-configuration',
      headers: spoofed,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as Record<string, unknown>;
    expect(body.issuer).toBe('https://id.example');
    for (const [name, value] of Object.entries(body)) {
      if (typeof value === 'string' && /^https?:/.test(value))
        expect(value, name).toMatch(/^https:\/\/id\.example(\/|$)/);
    }
  });

  it('changes nothing in redirects: the authorize error goes to the registered redirect_uri with our iss', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/oauth/authorize?response_type=token&client_id=${client.clientId}&redirect_uri=${encodeURIComponent(client.redirectUri)}&state=s`,
      headers: spoofed,
    });
    const location = new URL(String(res.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(client.redirectUri);
    expect(location.searchParams.get('iss')).toBe('https://id.example');
    const signin = await t.app.inject({ method: 'GET', url: '/account', headers: spoofed });
    expect(String(signin.headers.location)).not.toContain('evil.example');
  });
});
