import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser } from '../helpers/browser.js';
import { makeUser, type TestUser } from '../helpers/factories.js';

/**
 * The pages' one script, the show-password toggle: served from this origin at a versioned URL,
 * included by the layout on every page, and the only script the pages' CSP admits.
 */

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  user = await makeUser(t);
});
afterAll(() => t.close());

const STRICT_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function scriptTags(html: string): string[] {
  return [...html.matchAll(/<script\b[^>]*>/gi)].map((match) => match[0]);
}

function scriptHref(html: string): string {
  const href = /<script src="([^"]+)" defer><\/script>/.exec(html)?.[1];
  if (!href) throw new Error('the page includes no script');
  return href;
}

describe('the CSP of the pages', () => {
  it("admits scripts from this origin only: script-src 'self', nothing inline", async () => {
    const signin = await t.app.inject({ method: 'GET', url: '/signin' });
    expect(signin.headers['content-security-policy']).toBe(STRICT_CSP);
    // The error pages too (rendered by the one error handler).
    const error = await t.app.inject({ method: 'GET', url: '/api/v1/oauth/authorize?client_id=pk_unknown' });
    expect(error.statusCode).toBe(400);
    expect(error.headers['content-security-policy']).toBe(STRICT_CSP);
    const scriptSrc = /script-src ([^;]*)/.exec(String(signin.headers['content-security-policy']))?.[1];
    expect(scriptSrc).toBe("'self'");
  });
});

describe('the script route', () => {
  it('serves the script as JavaScript, versioned and cached for a year, with an ETag and 304', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/signin' });
    const href = scriptHref(page.body);
    expect(href).toMatch(/^\/assets\/show-password\.js\?v=[A-Za-z0-9_-]{12}$/);
    const script = await t.app.inject({ method: 'GET', url: href });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers['x-content-type-options']).toBe('nosniff');
    // The URL's version is the content's: the ETag.
    expect(script.headers.etag).toBe(`"${new URL(href, 'http://x').searchParams.get('v')}"`);
    expect(script.body).toContain('input[type="password"]');
    expect(script.body).toContain('aria-label');

    const again = await t.app.inject({
      method: 'GET',
      url: href,
      headers: { 'if-none-match': script.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const stale = await t.app.inject({ method: 'GET', url: href, headers: { 'if-none-match': '"other"' } });
    expect(stale.statusCode).toBe(200);
  });
});

describe('the layout', () => {
  it('includes the script, deferred, on every page with a password field, with the texts of the page language', async () => {
    const browser = new Browser(t.app);
    await browser.signIn(user);
    for (const url of ['/signin', '/signup', '/account/password', '/account/delete', '/account']) {
      for (const [lang, show, hide] of [
        ['en', 'Show', 'Hide'],
        ['ru', 'Показать', 'Скрыть'],
      ] as const) {
        const page = await browser.get(`${url}?lang=${lang}`);
        expect(page.statusCode, url).toBe(200);
        expect(scriptTags(page.body), url).toEqual([
          expect.stringMatching(/^<script src="\/assets\/show-password\.js\?v=[A-Za-z0-9_-]+" defer>$/),
          // The sign-in page's passkey button and autofill.
          ...(url === '/signin'
            ? [
                expect.stringMatching(
                  /^<script src="\/assets\/webauthn-browser\.js\?v=[A-Za-z0-9_-]+" defer>$/,
                ),
                expect.stringMatching(/^<script src="\/assets\/passkeys\.js\?v=[A-Za-z0-9_-]+" defer>$/),
              ]
            : []),
        ]);
        // In <head>: loaded while the page is parsed, run once it is.
        expect(page.body.indexOf('<script'), url).toBeLessThan(page.body.indexOf('</head>'));
        expect(page.body, url).toContain(`data-show-password="${show}" data-hide-password="${hide}"`);
      }
    }
  });

  it('keeps the password fields plain inputs of type password: the forms work without the script', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/signin' });
    expect(page.body).toMatch(/<input id="password" name="password" type="password"/);
    expect(page.body).not.toContain('password-toggle');
  });
});
