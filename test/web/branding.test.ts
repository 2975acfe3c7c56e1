import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beginRegistration } from '../../src/modules/passkeys/passkeys.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';

/* BRAND_NAME, BRAND_LOGO_URL and BRAND_ACCENT_COLOR on the pages, under the pages' strict CSP. */

let branded: TestApp;
let plain: TestApp;
beforeAll(async () => {
  branded = await createTestApp({
    env: {
      BRAND_NAME: 'Northwind <ID>',
      BRAND_LOGO_URL: 'https://cdn.northwind.example/logo.svg',
      BRAND_ACCENT_COLOR: '#0B5D1E',
    },
  });
  plain = await createTestApp();
});
afterAll(async () => {
  await branded?.close();
  await plain?.close();
});

describe('branding', () => {
  it("puts the name, escaped, in every page's title and header, with the logo at a fixed size", async () => {
    for (const url of ['/signin', '/no/such/page']) {
      const res = await branded.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
      expect(res.body).toMatch(/<title>[^<]+ · Northwind &lt;ID&gt;<\/title>/);
      expect(res.body).toContain(
        '<a class="brand" href="/"><img class="brand-logo" src="https://cdn.northwind.example/logo.svg" alt="Logo of Northwind &lt;ID&gt;" width="28" height="28">Northwind &lt;ID&gt;</a>',
      );
      // The logo's origin, and only it, is admitted for images.
      expect(res.headers['content-security-policy']).toContain(
        "img-src 'self' data: https://cdn.northwind.example;",
      );
      expect(res.headers['content-security-policy']).toContain("style-src 'self';");
    }
  });

  it('serves the accent as a stylesheet of this origin (no inline style), versioned and cached', async () => {
    const page = await branded.app.inject({ method: 'GET', url: '/signin' });
    const href = /<link rel="stylesheet" href="(\/assets\/brand\.css\?v=[\w-]+)">/.exec(page.body)?.[1];
    expect(href).toBeDefined();
    expect(page.body).not.toMatch(/<style|style="/);
    const css = await branded.app.inject({ method: 'GET', url: href as string });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(css.body).toContain('@media (prefers-color-scheme: light)');
    expect(css.body).toContain('--accent: #0b5d1e;');
    expect(css.body).toMatch(/--accent-hover: #[0-9a-f]{6};/);
    const again = await branded.app.inject({
      method: 'GET',
      url: href as string,
      headers: { 'if-none-match': String(css.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
  });

  it('without settings: the name idp, no logo, no accent stylesheet and no such route', async () => {
    const page = await plain.app.inject({ method: 'GET', url: '/signin' });
    expect(page.body).toContain('<a class="brand" href="/">idp</a>');
    expect(page.body).not.toContain('brand.css');
    expect(page.headers['content-security-policy']).toContain("img-src 'self' data:;");
    expect((await plain.app.inject({ method: 'GET', url: '/assets/brand.css' })).statusCode).toBe(404);
  });

  it('names the service in the passkey prompt (the WebAuthn relying party name)', async () => {
    const user = await makeUser(branded);
    const started = await beginRegistration(
      branded.database.db,
      { config: branded.config, clock: branded.clock },
      { userId: user.id },
    );
    expect(started?.options.rp.name).toBe('Northwind <ID>');
  });
});
