import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIncident, setPlatformStatus } from '../../src/modules/platform/platform.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import { unescapeHtml } from '../helpers/html.js';

/*
 * The landing page at `/` and the HTML error pages of paths no route serves, chosen by `Accept`:
 * browsers get pages, API clients the contract's JSON, and the API's own paths JSON to everyone.
 */

/** What Chromium sends when it opens a page. */
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

function get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url, headers });
}
const browser = (url: string, language = 'en-GB') =>
  get(url, { accept: BROWSER_ACCEPT, 'accept-language': language });
const text = (res: LightMyRequestResponse) =>
  unescapeHtml(res.body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' '));

describe('the landing page (/)', () => {
  it('greets a browser with the service name, the ways in, the status and the developer links', async () => {
    const res = await browser('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-language']).toBe('en');
    expect(res.headers['content-security-policy']).toContain("img-src 'self' data:;");
    expect(res.body).toContain('<title>Welcome · idp</title>');
    expect(res.body).toContain('<h1>idp</h1>');
    for (const href of [
      '/signin?return_to=/account',
      '/account',
      '/signup',
      '/api/v1/docs',
      '/api/v1/platform/status',
      '/.well-known/openid-configuration',
    ])
      expect(res.body).toContain(`href="${href}"`);
    expect(text(res)).toContain('Platform status All systems operational');
  });

  it('speaks Russian to a Russian browser', async () => {
    const res = await browser('/', 'ru-RU,ru;q=0.9');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<html lang="ru">');
    expect(res.body).toContain('<title>Добро пожаловать · idp</title>');
    expect(text(res)).toContain('Состояние платформы Все системы работают');
    expect(text(res)).toContain('Справочник API');
  });

  it('shows the status the operator set, with their message and the open incidents', async () => {
    await setPlatformStatus(
      t.database.db,
      { config: t.config, clock: t.clock },
      {
        status: 'maintenance',
        message: 'Database upgrade until 14:00 UTC <b>soon</b>',
      },
    );
    await openIncident(
      t.database.db,
      { config: t.config, clock: t.clock },
      {
        title: 'Slow sign-ins',
        message: 'We are looking into it.',
        severity: 'major',
      },
    );
    try {
      const en = await browser('/');
      expect(text(en)).toContain('Maintenance in progress');
      // The operator's text is escaped, never markup.
      expect(en.body).toContain('Database upgrade until 14:00 UTC &lt;b&gt;soon&lt;/b&gt;');
      expect(text(en)).toContain(
        'Open incidents Slow sign-ins (Major, since 1 June 2026) We are looking into it.',
      );
      const ru = await browser('/', 'ru');
      expect(text(ru)).toContain('Идут технические работы');
      expect(text(ru)).toContain('(Серьёзный, с 1 июня 2026 г.)');
    } finally {
      await setPlatformStatus(t.database.db, { config: t.config, clock: t.clock }, { status: 'operational' });
    }
    // The service's own sentence is not repeated in English on a Russian page.
    const ru = await browser('/', 'ru');
    expect(ru.body).not.toContain('All systems operational');
  });
  // An API client's answer at `/`: test/web/home-api.test.ts.
});

describe('paths no route serves', () => {
  it('are a 404 page for a browser, in its language, with the request id and a way home', async () => {
    const res = await browser('/no/such/page?x=<script>');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.body).toContain('<h1>Not found</h1>');
    expect(res.body).toContain('<a href="/">Go to the home page</a>');
    expect(res.body).toContain(`<code>${res.headers['x-request-id']}</code>`);
    expect(res.body).not.toContain('<script>');
    const ru = await browser('/no/such/page', 'ru');
    expect(ru.statusCode).toBe(404);
    expect(ru.body).toContain('<h1>Страница не найдена</h1>');
    expect(ru.body).toContain('<a href="/">На главную</a>');
  });

  it('are the JSON 404 for API clients', async () => {
    for (const headers of [{}, { accept: 'application/json' }, { accept: '*/*' }] as Record<string, string>[])
      expectApiError(await get('/no/such/page', headers), 404, 'not_found');
  });

  it('under /api/ and /.well-known/ are JSON even to a browser, as API hosts answer', async () => {
    for (const path of ['/api/v1/nothing-here', '/api/nothing', '/.well-known/nothing'])
      expectApiError(await browser(path), 404, 'not_found');
  });

  it('with another method are a 405 page for a browser (with Allow), JSON for API clients', async () => {
    const page = await t.app.inject({ method: 'PUT', url: '/signup', headers: { accept: BROWSER_ACCEPT } });
    expect(page.statusCode).toBe(405);
    expect(page.headers.allow).toBe('GET, HEAD, POST');
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('This page cannot be used this way.');
    const api = await t.app.inject({ method: 'POST', url: '/', headers: { accept: 'application/json' } });
    expectApiError(api, 405, 'method_not_allowed');
    expect(api.headers.allow).toBe('GET, HEAD');
    const apiPath = await t.app.inject({
      method: 'POST',
      url: '/api/v1/platform/status',
      headers: { accept: BROWSER_ACCEPT },
    });
    expectApiError(apiPath, 405, 'method_not_allowed');
  });
});

describe('the public rate limit on 404s', () => {
  it('still counts them, and says so with a page to a browser and JSON to an API client', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_PUBLIC_PER_MIN: '2' } });
    try {
      const hit = (url: string, headers: Record<string, string>) =>
        limited.app.inject({ method: 'GET', url, headers, remoteAddress: '198.51.100.7' });
      expect((await hit('/missing/1', { accept: BROWSER_ACCEPT })).statusCode).toBe(404);
      expect((await hit('/', { accept: BROWSER_ACCEPT })).statusCode).toBe(200);
      const page = await hit('/missing/2', { accept: BROWSER_ACCEPT });
      expect(page.statusCode).toBe(429);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(Number(page.headers['retry-after'])).toBeGreaterThan(0);
      expect(page.body).toContain('Too many attempts');
      expectApiError(await hit('/missing/3', {}), 429, 'rate_limited');
      expectApiError(await hit('/', {}), 429, 'rate_limited');
    } finally {
      await limited.close();
    }
  });
});
