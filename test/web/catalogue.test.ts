import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouteRegistry } from '../../src/http/route-registry.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('GET /api/v1/ (route catalogue)', () => {
  it('answers at /api/v1/ and /api/v1/index.php with the same catalogue', async () => {
    const root = await t.app.inject({ method: 'GET', url: '/api/v1/' });
    const php = await t.app.inject({ method: 'GET', url: '/api/v1/index.php' });
    expect(root.statusCode).toBe(200);
    expect(php.statusCode).toBe(200);
    expect(php.json()).toEqual(root.json());
    expect(root.json()).toMatchObject({ ok: true, version: 'v1' });
  });

  it('lists every registered route with method, path, auth and description', async () => {
    const { routes } = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json() as {
      routes: Array<{ method: string; path: string; auth: string; description: string }>;
    };
    const listed = new Set(routes.map((route) => `${route.method} ${route.path}`));
    for (const route of [
      'GET /api/v1/',
      'GET /api/v1/index.php',
      'GET /api/v1/platform/status',
      'GET /health/live',
      'GET /health/ready',
    ]) {
      expect(listed).toContain(route);
    }
    for (const route of routes) {
      expect(route.path.startsWith('/')).toBe(true);
      expect(['public', 'bearer', 'client', 'browser', 'mobile']).toContain(route.auth);
      expect(route.description.length).toBeGreaterThan(3);
      expect(route.method).not.toBe('HEAD');
    }
    // Every entry is a route Fastify really serves.
    for (const route of routes) {
      expect(t.app.hasRoute({ method: route.method as 'GET', url: route.path })).toBe(true);
    }
    expect(routes.find((route) => route.path === '/api/v1/platform/status')?.auth).toBe('public');
  });

  it('learns a route added later, without a hand-kept list', async () => {
    const app = Fastify();
    const registry = new RouteRegistry();
    app.addHook('onRoute', registry.onRoute);
    app.get('/api/v1/example', { config: { auth: 'bearer', description: 'An example' } }, async () => ({}));
    await app.ready();
    expect(registry.list()).toEqual([
      { method: 'GET', path: '/api/v1/example', auth: 'bearer', description: 'An example' },
    ]);
    expect(registry.allowedMethods('/api/v1/example')).toEqual(['GET', 'HEAD']);
    expect(registry.allowedMethods('/api/v1/other')).toEqual([]);
    await app.close();
  });

  it('refuses at startup a route that does not say who may call it', async () => {
    const app = Fastify();
    const registry = new RouteRegistry();
    app.addHook('onRoute', registry.onRoute);
    expect(() => app.get('/undocumented', async () => ({}))).toThrow(
      /must declare config.auth and config.description/,
    );
    await app.close();
  });

  it('refuses at startup a form route outside the sign-in limit', async () => {
    const app = Fastify();
    const registry = new RouteRegistry();
    app.addHook('onRoute', registry.onRoute);
    const config = { auth: 'browser', description: 'A form' } as const;
    expect(() => app.post('/form', { config }, async () => ({}))).toThrow(
      /must declare config.rateLimit: 'signin'/,
    );
    // A page that only shows (GET) needs no declaration; the same form with it is accepted.
    expect(() => app.get('/page', { config }, async () => ({}))).not.toThrow();
    expect(() =>
      app.post('/declared', { config: { ...config, rateLimit: 'signin' } }, async () => ({})),
    ).not.toThrow();
    await app.close();
  });
});
