import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { capturedLogger } from '../helpers/log-capture.js';

/*
 * Every answer carries X-Request-Id, whatever answered it (a route, a page, the 404 handler, the
 * error handler, a static file, the rate limiter, the router), and it is the reqId of the one log
 * line of that request: what a person quotes from a page or a client from a header finds the line.
 */

const { logger, lines: written } = capturedLogger();

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    env: { RATE_LIMIT_PUBLIC_PER_MIN: '2' },
    logger,
  });
});
afterAll(() => t.close());

let address = 0;
/** Each request from an address of its own, so that only the rate-limit case meets the limit. */
const get = (url: string, remoteAddress = `198.51.100.${++address}`) =>
  t.app.inject({ method: 'GET', url, remoteAddress });

describe('X-Request-Id', () => {
  it('is on every kind of answer, and is the reqId of its one log line', async () => {
    const limited = '198.51.100.250';
    await get('/api/v1/platform/status', limited);
    await get('/api/v1/platform/status', limited);
    const answers: Array<[string, LightMyRequestResponse, number]> = [
      ['API', await get('/api/v1/platform/status'), 200],
      ['page', await get('/signin'), 200],
      ['error page', await get('/api/v1/oauth/authorize?client_id=pk_unknown'), 400],
      ['API error', await get('/api/v1/oauth/userinfo'), 401],
      ['unknown path', await get('/no/such/path'), 404],
      [
        'wrong method',
        await t.app.inject({
          method: 'DELETE',
          url: '/api/v1/platform/status',
          remoteAddress: '198.51.100.200',
        }),
        405,
      ],
      ['static file', await get('/assets/styles.css'), 200],
      ['image', await get('/static/default-avatar.png'), 200],
      ['rate limited', await get('/api/v1/platform/status', limited), 429],
      ['malformed path', await get('/assets/%zz'), 400],
    ];
    const lines = written.map((text) => JSON.parse(text) as Record<string, unknown>);
    const ids = new Set<string>();
    for (const [kind, res, status] of answers) {
      expect(res.statusCode, kind).toBe(status);
      const id = res.headers['x-request-id'] as string;
      expect(id, kind).toMatch(/^[0-9a-f-]{36}$/);
      ids.add(id);
      const mine = lines.filter((line) => line.reqId === id);
      expect(mine, kind).toHaveLength(1);
      expect(mine[0], kind).toMatchObject({ msg: 'request completed', statusCode: status });
    }
    expect(ids.size).toBe(answers.length);
    const limitedLine = lines.find((line) => line.reqId === answers[8]?.[1].headers['x-request-id']);
    expect(limitedLine).toMatchObject({ error: 'rate_limited' });
  });
});
