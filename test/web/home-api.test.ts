import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * `/` for a caller that is not a browser: curl (`Accept: *\/*`), an API client, or no `Accept`.
 * A newcomer trying the service with curl learns where the API is instead of a bare 404.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { PUBLIC_URL: 'https://id.example.test' } });
});
afterAll(() => t.close());

describe('GET / for an API client', () => {
  it('says / is a page for browsers and links the catalogue, the reference and discovery', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html;q=0.5']) {
      const res = await t.app.inject({ method: 'GET', url: '/', headers: accept ? { accept } : {} });
      expect(res.statusCode, String(accept)).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.vary).toBe('Accept');
      expect(res.json()).toEqual({
        ok: true,
        message:
          "/ is the home page, for people in a browser (Accept: text/html). The API's routes are listed at /api/v1/ and described at /api/v1/docs.",
        catalogue: 'https://id.example.test/api/v1/',
        reference: 'https://id.example.test/api/v1/docs',
        openapi: 'https://id.example.test/api/v1/openapi.json',
        openid_configuration: 'https://id.example.test/.well-known/openid-configuration',
      });
    }
  });

  it('links addresses that answer', async () => {
    const links = (await t.app.inject({ method: 'GET', url: '/' })).json();
    for (const key of ['catalogue', 'reference', 'openapi', 'openid_configuration']) {
      const res = await t.app.inject({ method: 'GET', url: new URL(links[key]).pathname });
      expect(res.statusCode, key).toBe(200);
    }
  });

  it('still gives a browser the page', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/',
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
  });
});
