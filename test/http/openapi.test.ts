import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

/* GET /api/v1/openapi.json: the OpenAPI 3.1 document, built from the same routes as the catalogue. */

let t: TestApp;
let doc: {
  openapi: string;
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Record<string, unknown>>>;
};

beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  doc = res.json();
});
afterAll(() => t.close());

function operation(method: string, path: string): Record<string, unknown> {
  const found = doc.paths[path]?.[method.toLowerCase()];
  if (!found) throw new Error(`${method} ${path} is not in the OpenAPI document`);
  return found;
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document for this service', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: t.config.PUBLIC_URL }]);
    const result = await new Validator().validate(doc as never);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('documents the error body for 4xx and 5xx answers of the API', () => {
    const responses = operation('GET', '/api/v1/me').responses as Record<
      string,
      { content: Record<string, { schema: { required: string[] } }> }
    >;
    for (const range of ['4XX', '5XX']) {
      expect(responses[range]?.content['application/json']?.schema.required).toEqual([
        'ok',
        'error',
        'error_description',
      ]);
    }
  });

  it('is readable as a page at /api/v1/docs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('<code>POST /api/v1/wallet/charge</code>');
    expect(res.body).toContain('<code>idempotency_key</code> (required)');
    expect(res.body).toContain('<code>GET /api/users/search</code>');
  });

  it('describes every route of the catalogue, with its catalogue line as the summary', async () => {
    const catalogue = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json() as {
      routes: Array<{ method: string; path: string; auth: string; description: string }>;
    };
    expect(catalogue.routes.length).toBeGreaterThan(30);
    for (const route of catalogue.routes) {
      if (route.path === '/api/v1/openapi.json' || route.path === '/api/v1/docs') continue;
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      expect(operation(route.method, path)).toMatchObject({ summary: route.description, tags: [route.auth] });
    }
  });

  it('marks bearer routes with the bearer and DPoP schemes, and client-authenticated ones with basic', () => {
    for (const path of ['/api/v1/me', '/api/v1/premium/status', '/api/v1/wallet/balance']) {
      expect(operation('GET', path).security).toEqual([{ bearer: [] }, { dpop: [] }]);
    }
    expect(operation('POST', '/api/v1/wallet/charge').security).toEqual([{ bearer: [] }, { dpop: [] }]);
    expect(operation('POST', '/api/v1/oauth/token').security).toEqual([{ client: [] }]);
    expect(operation('GET', '/api/users/search').security).toBeUndefined();
  });

  it('documents the wallet charge body and its answers', () => {
    const charge = operation('POST', '/api/v1/wallet/charge') as {
      requestBody: {
        content: Record<string, { schema: { required: string[]; properties: Record<string, unknown> } }>;
      };
      responses: Record<string, unknown>;
    };
    const schema = charge.requestBody.content['application/json']?.schema;
    expect(schema?.required.sort()).toEqual(['amount', 'currency', 'description', 'idempotency_key']);
    expect(schema?.properties.currency).toMatchObject({ enum: ['COIN'] });
    expect(Object.keys(charge.responses)).toEqual(expect.arrayContaining(['200', '201']));
  });

  it('documents the four mobile routes with their bodies', () => {
    const fields: Record<string, string[]> = {
      challenge: ['client_id', 'device_id'],
      verify: ['challenge', 'client_id', 'device_id', 'password', 'public_key', 'signature', 'username'],
      refresh: ['challenge', 'client_id', 'device_id', 'refresh_token', 'signature'],
      logout: ['client_id', 'device_id'],
    };
    for (const [route, required] of Object.entries(fields)) {
      const op = operation('POST', `/api/v1/mobile/${route}`) as {
        requestBody: { content: Record<string, { schema: { required: string[] } }> };
        tags: string[];
      };
      expect(op.tags).toEqual(['mobile']);
      expect(op.requestBody.content['application/json']?.schema.required.sort()).toEqual(required);
    }
  });
});
