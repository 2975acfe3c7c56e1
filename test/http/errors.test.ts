import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildApp } from '../../src/app.js';
import { createLogger } from '../../src/http/logger.js';
import { InvalidClient, InvalidToken, Unauthorized } from '../../src/lib/errors.js';
import { testConfig } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let app: FastifyInstance;
let database: TestDatabase;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const config = testConfig({ LOG_LEVEL: 'info' });
  app = await buildApp({ config, db: database.db, logger: createLogger(config, sink) });
  // Routes that exist only in this test, to reach each kind of failure.
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const config_ = { auth: 'public', description: 'test route' } as const;
  routes.post(
    '/test/echo',
    {
      config: config_,
      schema: { body: z.object({ amount: z.number().positive(), note: z.string().max(5) }) },
    },
    async (request) => ({ ok: true, body: request.body }),
  );
  routes.get(
    '/test/query',
    { config: config_, schema: { querystring: z.object({ q: z.string().min(1).max(64) }) } },
    async (request) => ({ ok: true, q: request.query.q }),
  );
  routes.get('/test/crash', { config: config_ }, async () => {
    throw new Error('select * from users where password_hash = secret; at db.ts:12');
  });
  routes.get('/test/db-down', { config: config_ }, async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  });
  routes.get('/test/sql-timeout', { config: config_ }, async () => {
    throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
  });
  routes.get('/test/unauthorized', { config: config_ }, async () => {
    throw new Unauthorized();
  });
  routes.get('/test/invalid-token', { config: config_ }, async () => {
    throw new InvalidToken();
  });
  routes.get('/test/invalid-client', { config: config_ }, async () => {
    throw new InvalidClient();
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

describe('error responses', () => {
  it('answers an unknown path with 404 not_found', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/nothing-here?x=1' });
    expectApiError(res, 404, 'not_found');
    // The path is the caller's input: it is not repeated (RFC 6749 §5.2 characters only, no echo).
    expect(res.json().error_description).toBe(
      'No route for GET at this path; GET /api/v1/ lists every route.',
    );
  });

  it('answers a known path with another method with 405 and Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
      const res = await app.inject({ method, url: '/api/v1/platform/status' });
      expectApiError(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD');
    }
    const res = await app.inject({ method: 'GET', url: '/test/echo' });
    expectApiError(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('POST');
  });

  it('answers a body over 1 MiB with 413 payload_too_large, JSON or form', async () => {
    const big = 'x'.repeat(1024 * 1024 + 10);
    const json = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ amount: 1, note: big }),
    });
    expectApiError(json, 413, 'payload_too_large');
    const form = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `note=${big}`,
    });
    expectApiError(form, 413, 'payload_too_large');
  });

  it('accepts a body just under the limit', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ amount: 1, note: 'a', pad: 'x'.repeat(1024 * 1000) }),
    });
    expect(res.statusCode).toBe(200);
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"amount": 1,',
    });
    expectApiError(res, 400, 'invalid_request');
    expect(res.json().error_description).toMatch(/not valid JSON/);
  });

  it('answers an empty JSON body with 400 invalid_request', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expectApiError(res, 400, 'invalid_request');
  });

  it('answers JSON prototype pollution attempts with 400', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"amount": 1, "note": "a", "__proto__": {"admin": true}}',
    });
    expectApiError(res, 400, 'invalid_request');
  });

  it('answers an unsupported content type with 400 invalid_request', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'text/xml' },
      payload: '<a/>',
    });
    expectApiError(res, 400, 'invalid_request');
    expect(res.json().error_description).toMatch(/Content-Type/);
  });

  it('parses form bodies', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'amount=1&note=hi',
    });
    // Form values are strings, so the number schema refuses them: proves the body reached validation.
    expectApiError(res, 400, 'invalid_request');
    expect(res.json().error_description).toContain('body.amount');
  });

  it('answers schema violations with 400 invalid_request naming the field', async () => {
    const body = await app.inject({
      method: 'POST',
      url: '/test/echo',
      payload: { amount: -1, note: 'toolong' },
    });
    expectApiError(body, 400, 'invalid_request');
    expect(body.json().error_description).toMatch(/body\.amount/);
    expect(body.json().error_description).toMatch(/body\.note/);

    const query = await app.inject({ method: 'GET', url: `/test/query?q=${'x'.repeat(65)}` });
    expectApiError(query, 400, 'invalid_request');
    expect(query.json().error_description).toMatch(/query\.q/);

    const missing = await app.inject({ method: 'GET', url: '/test/query' });
    expectApiError(missing, 400, 'invalid_request');
  });

  it('answers an unknown error with a fixed 500 text and logs the detail', async () => {
    const res = await app.inject({ method: 'GET', url: '/test/crash' });
    expectApiError(res, 500, 'server_error');
    expect(res.json().error_description).toBe('An unexpected error occurred; it has been logged.');
    expect(res.body).not.toContain('password_hash');
    const logged = logLines.find((line) => line.msg === 'unhandled error');
    expect(JSON.stringify(logged)).toContain('select * from users');
  });

  it('answers an unreachable database or a statement timeout with 503 unavailable', async () => {
    expectApiError(await app.inject({ method: 'GET', url: '/test/db-down' }), 503, 'unavailable');
    expectApiError(await app.inject({ method: 'GET', url: '/test/sql-timeout' }), 503, 'unavailable');
  });

  it('sends the headers an error carries', async () => {
    const unauthorized = await app.inject({ method: 'GET', url: '/test/unauthorized' });
    expectApiError(unauthorized, 401, 'unauthorized');
    expect(unauthorized.headers['www-authenticate']).toBe('Bearer realm="idp"');
    expectApiError(await app.inject({ method: 'GET', url: '/test/invalid-token' }), 401, 'invalid_token');
    expectApiError(await app.inject({ method: 'GET', url: '/test/invalid-client' }), 401, 'invalid_client');
  });

  it('gives every response a request id', async () => {
    const ok = await app.inject({ method: 'GET', url: '/health/live' });
    const missing = await app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'forged' } });
    expect(ok.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(missing.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(missing.headers['x-request-id']).not.toBe('forged');
  });
});
