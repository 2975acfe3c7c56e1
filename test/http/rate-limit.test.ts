import { randomInt } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/http/logger.js';
import { hashSecret } from '../../src/lib/secrets.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import { hiddenFields } from '../helpers/browser.js';
import { testRedisUrl } from '../helpers/database.js';
import { dpopKey, resourceProof } from '../helpers/dpop.js';
import { makeClient, makeUser, type TestClient } from '../helpers/factories.js';
import { basic } from '../helpers/http.js';
import { insertAccessToken } from '../helpers/tokens.js';

/*
 * Rate limits per route class (README "Rate limits"): public routes and 404s per IP, the token
 * endpoint per client, bearer routes per token, sign-in per IP and per account; 429 rate_limited
 * with Retry-After and the RateLimit headers; shared by every instance through Redis.
 */

/** A fresh address per scenario, so counters (also those left in Redis by earlier runs) never mix. */
const newIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

const LIMITS = {
  RATE_LIMIT_PUBLIC_PER_MIN: '3',
  RATE_LIMIT_TOKEN_PER_MIN: '2',
  RATE_LIMIT_BEARER_PER_MIN: '2',
  RATE_LIMIT_SIGNIN_PER_MIN: '3',
  RATE_LIMIT_ACCOUNT_PER_MIN: '3',
  RATE_LIMIT_FAILED_AUTH_PER_MIN: '3',
};

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: LIMITS });
});
afterAll(() => t.close());

function get(app: TestApp, url: string, ip: string, headers: Record<string, string> = {}) {
  return app.app.inject({ method: 'GET', url, remoteAddress: ip, headers });
}

function expectLimited(res: LightMyRequestResponse, limit: number, page = false): void {
  if (page) {
    // A page answers with a page: the same status and headers, in HTML.
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
  } else {
    expectApiError(res, 429, 'rate_limited');
  }
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
  expect(res.headers['ratelimit-limit']).toBe(String(limit));
  expect(res.headers['ratelimit-remaining']).toBe('0');
  expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
}

describe('public routes, per IP', () => {
  it('answer with the RateLimit headers, then 429 rate_limited with Retry-After', async () => {
    const ip = newIp();
    for (const remaining of [2, 1, 0]) {
      const res = await get(t, '/api/users/search?q=abc', ip);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe(String(remaining));
    }
    expectLimited(await get(t, '/api/users/search?q=abc', ip), 3);
    // Another address has its own count.
    expect((await get(t, '/api/users/search?q=abc', newIp())).statusCode).toBe(200);
  });

  it('count 404s too', async () => {
    const ip = newIp();
    for (let i = 0; i < 3; i++) expect((await get(t, `/no/such/path/${i}`, ip)).statusCode).toBe(404);
    expectLimited(await get(t, '/no/such/path/again', ip), 3);
  });

  it('do not trust X-Forwarded-For without TRUST_PROXY', async () => {
    const ip = newIp();
    for (let i = 0; i < 3; i++) await get(t, '/api/users/search?q=abc', ip, { 'x-forwarded-for': newIp() });
    expectLimited(await get(t, '/api/users/search?q=abc', ip, { 'x-forwarded-for': newIp() }), 3);
  });

  it('count the client address of X-Forwarded-For behind a trusted proxy', async () => {
    const behindProxy = await createTestApp({ env: { ...LIMITS, TRUST_PROXY: '127.0.0.1' } });
    try {
      const client = newIp();
      for (let i = 0; i < 3; i++) {
        const res = await get(behindProxy, '/api/users/search?q=abc', '127.0.0.1', {
          'x-forwarded-for': client,
        });
        expect(res.statusCode).toBe(200);
      }
      expectLimited(
        await get(behindProxy, '/api/users/search?q=abc', '127.0.0.1', { 'x-forwarded-for': client }),
        3,
      );
      // The proxy's other clients are not affected.
      const other = await get(behindProxy, '/api/users/search?q=abc', '127.0.0.1', {
        'x-forwarded-for': newIp(),
      });
      expect(other.statusCode).toBe(200);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('the token endpoint, per client', () => {
  let shop: TestClient;
  let other: TestClient;
  beforeAll(async () => {
    shop = await makeClient(t);
    other = await makeClient(t);
  });

  const tokenRequest = (client: TestClient, ip: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      remoteAddress: ip,
      headers: { authorization: basic(client), 'content-type': 'application/x-www-form-urlencoded' },
      payload:
        'grant_type=authorization_code&code=ac_unknown&redirect_uri=https%3A%2F%2Fsite.example%2Fcallback',
    });

  it('limits each client wherever its requests come from; other clients are not affected', async () => {
    for (let i = 0; i < 2; i++) expectApiError(await tokenRequest(shop, newIp()), 400, 'invalid_grant');
    expectLimited(await tokenRequest(shop, newIp()), 2);
    expectApiError(await tokenRequest(other, newIp()), 400, 'invalid_grant');
  });

  it('counts a client only once it authenticated: wrong secrets with its public id cannot use up its limit', async () => {
    const victim = await makeClient(t);
    const impostor = { ...victim, clientSecret: 'sk_wrong' };
    for (let i = 0; i < 21; i++) expectApiError(await tokenRequest(impostor, newIp()), 401, 'invalid_client');
    expectApiError(await tokenRequest(victim, newIp()), 400, 'invalid_grant');
    // The same holds for client_secret_post.
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/oauth/token',
        remoteAddress: newIp(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `grant_type=refresh_token&refresh_token=rt_x&client_id=${victim.clientId}&client_secret=sk_wrong`,
      });
      expectApiError(res, 401, 'invalid_client');
    }
    expectApiError(await tokenRequest(victim, newIp()), 400, 'invalid_grant');
  });
});

describe('failed authentications, per IP', () => {
  it('client authentication: after the allowed failures the address is refused, others are not', async () => {
    const client = await makeClient(t);
    const ip = newIp();
    const request = (secret: string, from: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/oauth/revoke',
        remoteAddress: from,
        headers: {
          authorization: basic({ ...client, clientSecret: secret }),
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: 'token=at_x',
      });
    for (let i = 0; i < 3; i++) expectApiError(await request(`sk_guess_${i}`, ip), 401, 'invalid_client');
    expectLimited(await request(client.clientSecret, ip), 3);
    expect((await request(client.clientSecret, newIp())).statusCode).toBe(200);
  });

  it('bearer routes: invalid tokens from one address are refused past the limit, on every bearer route', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const good = await insertAccessToken(t.database.db, {
      userId: user.id,
      clientId: client.clientId,
      scopes: ['openid'],
    });
    const ip = newIp();
    for (let i = 0; i < 3; i++) {
      expectApiError(
        await get(t, '/api/v1/oauth/userinfo', ip, { authorization: `Bearer at_guess_${i}` }),
        401,
        'invalid_token',
      );
    }
    expectLimited(await get(t, '/api/v1/me', ip, { authorization: `Bearer ${good}` }), 3);
    expect((await get(t, '/api/v1/me', newIp(), { authorization: `Bearer ${good}` })).statusCode).toBe(200);
  });
});

describe('every form POST counts as sign-in, per IP', () => {
  // Public routes allow more here, so only the sign-in limit can answer 429.
  let forms: TestApp;
  beforeAll(async () => {
    forms = await createTestApp({ env: { ...LIMITS, RATE_LIMIT_PUBLIC_PER_MIN: '100' } });
  });
  afterAll(() => forms.close());

  it.each([
    '/signup',
    '/signout',
    '/api/v1/oauth/authorize/decision',
    '/account/apps/revoke',
    '/account/devices/signout',
  ])('%s', async (path) => {
    const ip = newIp();
    const post = () =>
      forms.app.inject({
        method: 'POST',
        url: path,
        remoteAddress: ip,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'csrf_token=x&username=someone&password=something',
      });
    for (let i = 0; i < 3; i++) expect((await post()).statusCode).not.toBe(429);
    expectLimited(await post(), 3, true);
  });

  it('a huge username is bounded before any work: an ordinary answer, also at the account limit', async () => {
    const username = '\ufdfa'.repeat(100_000);
    const res = await t.app.inject({
      method: 'POST',
      url: '/signin',
      remoteAddress: newIp(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ username, password: 'x', csrf_token: 'x' }).toString(),
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
  });
});

describe('bearer routes, per token', () => {
  it('limit each access token; another token of the same user is not affected', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const [first, second] = await Promise.all(
      [0, 1].map(() =>
        insertAccessToken(t.database.db, { userId: user.id, clientId: client.clientId, scopes: ['openid'] }),
      ),
    );
    const ip = newIp();
    for (let i = 0; i < 2; i++) {
      expect(
        (await get(t, '/api/v1/oauth/userinfo', ip, { authorization: `Bearer ${first}` })).statusCode,
      ).toBe(200);
    }
    expectLimited(await get(t, '/api/v1/oauth/userinfo', ip, { authorization: `Bearer ${first}` }), 2);
    expect(
      (await get(t, '/api/v1/oauth/userinfo', ip, { authorization: `Bearer ${second}` })).statusCode,
    ).toBe(200);
  });

  it('limit a DPoP-bound token sent with the DPoP scheme under the same per-token key', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const token = await insertAccessToken(t.database.db, {
      userId: user.id,
      clientId: client.clientId,
      scopes: ['openid'],
      clock: t.clock,
    });
    const key = await dpopKey();
    await t.database.db
      .updateTable('access_tokens')
      .set({ jkt: key.jkt })
      .where('token_hash', '=', hashSecret(token))
      .execute();
    // Each from another address: only the token can be what is counted.
    const withProof = async () =>
      get(t, '/api/v1/oauth/userinfo', newIp(), {
        authorization: `DPoP ${token}`,
        dpop: await resourceProof(t, key, token),
      });
    for (let i = 0; i < 2; i++) expect((await withProof()).statusCode).toBe(200);
    expectLimited(await withProof(), 2);
    expectLimited(await get(t, '/api/v1/oauth/userinfo', newIp(), { authorization: `Bearer ${token}` }), 2);
  });
});

describe('sign-in', () => {
  const signIn = (username: string, ip: string) =>
    t.app.inject({
      method: 'POST',
      url: '/signin',
      remoteAddress: ip,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ username, password: 'not the password', csrf_token: 'x' }).toString(),
    });

  it('is limited per account, whatever the address, once the form passed the CSRF check', async () => {
    const user = await makeUser(t);
    // Each from a fresh browser at a fresh address, with its page's CSRF token.
    const withToken = async (username: string) => {
      const ip = newIp();
      const page = await get(t, '/signin', ip);
      const cookie = page.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
      return t.app.inject({
        method: 'POST',
        url: '/signin',
        remoteAddress: ip,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          ...hiddenFields(page.body, '/signin'),
          username,
          password: 'not the password',
        }).toString(),
      });
    };
    for (let i = 0; i < 3; i++) expect((await withToken(user.username)).statusCode).toBe(401);
    expectLimited(await withToken(user.username.toUpperCase()), 3, true);
  });

  it('is limited per address, whatever the account', async () => {
    const ip = newIp();
    for (let i = 0; i < 3; i++) expect((await signIn(`someone_${i}`, ip)).statusCode).not.toBe(429);
    expectLimited(await signIn('someone_else', ip), 3, true);
  });
});

describe("the mobile app's verify", () => {
  it('is limited per address by its refusals; per account, its database budget counts', async () => {
    const ip = newIp();
    const verify = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/mobile/verify',
        remoteAddress: ip,
        payload: { client_id: 'pk_any', device_id: 'device-0001', username: 'someone', password: 'x' },
      });
    for (let i = 0; i < 3; i++) expect((await verify()).statusCode).not.toBe(429);
    expectLimited(await verify(), 3);
  });
});

describe.skipIf(testRedisUrl === undefined)('several instances (needs TEST_REDIS_URL)', () => {
  it('share the counters through Redis', async () => {
    const env = { ...LIMITS, REDIS_URL: testRedisUrl as string };
    const one = await createTestApp({ env });
    const two = await createTestApp({ env });
    try {
      const ip = newIp();
      expect((await get(one, '/api/users/search?q=abc', ip)).statusCode).toBe(200);
      expect((await get(two, '/api/users/search?q=abc', ip)).statusCode).toBe(200);
      const third = await get(one, '/api/users/search?q=abc', ip);
      expect(third.statusCode).toBe(200);
      expect(third.headers['ratelimit-remaining']).toBe('0');
      expectLimited(await get(two, '/api/users/search?q=abc', ip), 3);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('keep apart the counters of deployments with another REDIS_KEY_PREFIX', async () => {
    const env = { ...LIMITS, REDIS_URL: testRedisUrl as string };
    const one = await createTestApp({ env });
    const elsewhere = await createTestApp({ env: { ...env, REDIS_KEY_PREFIX: `other-${randomInt(1e9)}:` } });
    try {
      const ip = newIp();
      for (let i = 0; i < 3; i++)
        expect((await get(one, '/api/users/search?q=abc', ip)).statusCode).toBe(200);
      expectLimited(await get(one, '/api/users/search?q=abc', ip), 3);
      const fresh = await get(elsewhere, '/api/users/search?q=abc', ip);
      expect(fresh.statusCode).toBe(200);
      expect(fresh.headers['ratelimit-remaining']).toBe('2');
    } finally {
      await one.close();
      await elsewhere.close();
    }
  });
});

describe('a Redis that is down', () => {
  it('lets requests through, without RateLimit headers, and says so in the log', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const down = await createTestApp({
      // Nothing listens on port 1.
      env: { ...LIMITS, REDIS_URL: 'redis://127.0.0.1:1' },
      logger: createLogger({ LOG_LEVEL: 'warn' }, sink) as FastifyBaseLogger,
    });
    try {
      const ip = newIp();
      for (let i = 0; i < 5; i++) {
        const res = await get(down, '/api/users/search?q=abc', ip);
        expect(res.statusCode).toBe(200);
        expect(res.headers['ratelimit-limit']).toBeUndefined();
      }
      expect(lines.join('')).toContain('rate-limit store (Redis) unavailable');
    } finally {
      await down.close();
    }
  });
});
