import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credit } from '../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import { makeClient, makeUser, mintCode } from '../helpers/factories.js';
import { exchangeCode } from '../helpers/http.js';
import { insertAccessToken } from '../helpers/tokens.js';

/* GET /metrics (Prometheus): off without METRICS_TOKEN, answered only to that token when set. */

const METRICS_TOKEN = 'metrics-token-of-at-least-32-characters';
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { METRICS_TOKEN } });
});
afterAll(() => t.close());

const scrape = (authorization?: string) =>
  t.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });

describe('GET /metrics', () => {
  it('does not exist without METRICS_TOKEN', async () => {
    const off = await createTestApp();
    try {
      expectApiError(await off.app.inject({ method: 'GET', url: '/metrics' }), 404, 'not_found');
    } finally {
      await off.close();
    }
  });

  it('refuses a caller without the token, or with another one', async () => {
    expectApiError(await scrape(), 401, 'unauthorized');
    expectApiError(await scrape('Bearer not-the-metrics-token-but-as-long-as-it'), 401, 'unauthorized');
  });

  it('counts requests by route pattern and status, token issuance, and process figures', async () => {
    await t.app.inject({ method: 'GET', url: '/api/v1/platform/status' });
    await t.app.inject({ method: 'GET', url: '/no/such/path/42' });
    const client = await makeClient(t);
    const user = await makeUser(t);
    expect((await exchangeCode(t.app, client, await mintCode(t, client, user))).statusCode).toBe(200);

    const res = await scrape(`Bearer ${METRICS_TOKEN}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['cache-control']).toBe('no-store');
    const text = res.body;
    expect(text).toMatch(
      /^idp_http_requests_total\{method="GET",route="\/api\/v1\/platform\/status",status="200"\} [1-9]/m,
    );
    // Unknown paths are one label, never the raw URL.
    expect(text).toMatch(/^idp_http_requests_total\{method="GET",route="unmatched",status="404"\} [1-9]/m);
    expect(text).not.toContain('/no/such/path/42');
    expect(text).toMatch(
      /^idp_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/platform\/status"\}/m,
    );
    expect(text).toMatch(/^idp_tokens_issued_total\{grant_type="authorization_code"\} [1-9]/m);
    expect(text).toMatch(/^idp_process_resident_memory_bytes \d+/m);
  });
  it('counts wallet charges by outcome, refusals included', async () => {
    const shop = await makeClient(t, { wallet: true });
    const user = await makeUser(t);
    await credit(t.database.db, { config: t.config, clock: t.clock }, { username: user.username, amount: 5 });
    const token = await insertAccessToken(t.database.db, {
      userId: user.id,
      clientId: shop.clientId,
      scopes: ['openid', 'wallet'],
      clock: t.clock,
    });
    const charge = (amount: number, key: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/wallet/charge',
        headers: { authorization: `Bearer ${token}` },
        payload: { amount, currency: 'COIN', description: 'metrics', idempotency_key: key },
      });
    // Counters live as long as the process: what this test adds is compared, not the total.
    const count = async (outcome: string) => {
      const text = (await scrape(`Bearer ${METRICS_TOKEN}`)).body;
      const line = new RegExp(`^idp_wallet_charges_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text);
      return Number(line?.[1] ?? 0);
    };
    const outcomes = ['charged', 'replayed', 'conflict', 'insufficient_funds'];
    const before = await Promise.all(outcomes.map(count));
    expect((await charge(1, 'metrics-1')).statusCode).toBe(201);
    expect((await charge(1, 'metrics-1')).statusCode).toBe(200);
    expect((await charge(2, 'metrics-1')).statusCode).toBe(409);
    expect((await charge(100, 'metrics-2')).statusCode).toBe(402);

    const after = await Promise.all(outcomes.map(count));
    expect(after).toEqual(before.map((n) => n + 1));
  });
});
