import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_TAGS } from '../../src/http/openapi-tags.js';
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

  it('is readable at /api/v1/docs: Swagger UI, served from this origin, drawing this document', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('<div id="api-reference" data-openapi-url="/api/v1/openapi.json">');
    const assets = [...res.body.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1] ?? '');
    for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css', 'api-reference.js', 'api-reference.css']) {
      const href = assets.find((asset) => asset.startsWith(`/assets/${file}?v=`));
      expect(href, file).toBeDefined();
      const asset = await t.app.inject({ method: 'GET', url: href ?? '' });
      expect(asset.statusCode, file).toBe(200);
      expect(asset.headers['content-type']).toMatch(
        file.endsWith('.js') ? /^text\/javascript/ : /^text\/css/,
      );
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    // No script or stylesheet from another origin, and the pages' strict CSP.
    expect(res.body).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    expect(res.headers['content-security-policy']).toContain("script-src 'self';");
    expect(res.headers['content-security-policy']).toContain("style-src 'self';");
  });

  it('groups the operations by feature, with the groups described in order', () => {
    const tags = (doc as unknown as { tags: Array<{ name: string; description: string }> }).tags;
    expect(tags.map((tag) => tag.name)).toEqual(OPENAPI_TAGS.map((tag) => tag.name));
    for (const tag of tags) expect(tag.description.length).toBeGreaterThan(20);
    const groupOf = (method: string, path: string) => (operation(method, path).tags as string[])[0];
    expect(groupOf('POST', '/api/v1/oauth/token')).toBe('OAuth and OpenID Connect');
    expect(groupOf('GET', '/.well-known/openid-configuration')).toBe('OAuth and OpenID Connect');
    expect(groupOf('GET', '/api/v1/oauth/authorize')).toBe('OAuth and OpenID Connect');
    expect(groupOf('GET', '/api/v1/me')).toBe('Profiles');
    expect(groupOf('GET', '/api/users/search')).toBe('Search');
    expect(groupOf('GET', '/api/v1/premium/status')).toBe('Premium');
    expect(groupOf('POST', '/api/v1/wallet/charge')).toBe('Wallet');
    expect(groupOf('GET', '/api/v1/platform/status')).toBe('Platform');
    expect(groupOf('GET', '/health/live')).toBe('Platform');
    expect(groupOf('POST', '/api/v1/mobile/verify')).toBe('Mobile');
    expect(groupOf('GET', '/api/v1/')).toBe('Catalogue');
    expect(groupOf('GET', '/signin')).toBe('Pages');
    expect(groupOf('GET', '/assets/swagger-ui-bundle.js')).toBe('Assets');
    // Every operation has exactly one known group, and no route of the API falls among the pages.
    const names = new Set<string>(OPENAPI_TAGS.map((tag) => tag.name));
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const op of Object.values(methods)) {
        const tags = op.tags as string[];
        expect(tags).toHaveLength(1);
        expect(names.has(tags[0] ?? ''), path).toBe(true);
        if (path.startsWith('/api/') && !path.startsWith('/api/v1/oauth/'))
          expect(tags[0], path).not.toBe('Pages');
      }
    }
  });

  it('says which body each kind of caller sends: HTML forms for pages, JSON for the API and the passkey scripts', () => {
    const bodyTypes = (method: string, path: string) =>
      Object.keys((operation(method, path) as { requestBody: { content: object } }).requestBody.content);
    expect(bodyTypes('POST', '/signin')).toEqual(['application/x-www-form-urlencoded']);
    expect(bodyTypes('POST', '/account/profile')).toEqual(['application/x-www-form-urlencoded']);
    expect(bodyTypes('POST', '/api/v1/oauth/token')).toEqual(['application/x-www-form-urlencoded']);
    expect(bodyTypes('POST', '/signin/passkey/verify')).toEqual(['application/json']);
    expect(bodyTypes('POST', '/api/v1/wallet/charge')).toEqual(['application/json']);
  });

  it('points at nothing outside the repository: no description names a file the repository lacks', () => {
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/\b(SPEC|CONTRACT|DESIGN)\.md\b/);
  });

  it('describes every route of the catalogue, with its catalogue line as the summary', async () => {
    const catalogue = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json() as {
      routes: Array<{ method: string; path: string; auth: string; description: string }>;
    };
    expect(catalogue.routes.length).toBeGreaterThan(30);
    for (const route of catalogue.routes) {
      if (route.path === '/api/v1/openapi.json' || route.path === '/api/v1/docs') continue;
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      expect(operation(route.method, path)).toMatchObject({
        summary: route.description,
        'x-auth': route.auth,
      });
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
        'x-auth': string;
      };
      expect(op.tags).toEqual(['Mobile']);
      expect(op['x-auth']).toBe('mobile');
      expect(op.requestBody.content['application/json']?.schema.required.sort()).toEqual(required);
    }
  });
});
