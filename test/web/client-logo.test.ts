import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, updateClient } from '../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser } from '../helpers/browser.js';
import { makeUser, type TestUser } from '../helpers/factories.js';
import { authorizeUrl } from '../helpers/http.js';

/*
 * A client's logo_uri (migrations/0027) and name on the pages of its requests: the sign-in page says
 * where the person is going ("to continue to …") with the logo, the consent page shows the logo,
 * and only those pages admit the logo's origin to their CSP's img-src.
 */

let t: TestApp;
let user: TestUser;
const redirectUri = 'https://games.example/callback';
let withLogo: string;
let withoutLogo: string;

beforeAll(async () => {
  t = await createTestApp();
  const ctx = { config: t.config, clock: t.clock };
  user = await makeUser(t);
  withLogo = (
    await createClient(t.database.db, ctx, {
      name: 'Northwind <Games> & "Co"',
      siteUrl: 'https://games.example',
      redirectUris: [redirectUri],
      logoUri: 'https://cdn.games.example/logo.png?size=128&v="2"',
    })
  ).client_id;
  withoutLogo = (
    await createClient(t.database.db, ctx, {
      name: 'Plain Site',
      siteUrl: 'https://plain.example',
      redirectUris: ['https://plain.example/cb'],
    })
  ).client_id;
});
afterAll(() => t.close());

/** The sign-in page an authorize request leads a browser without a session to. */
async function signInPageOf(browser: Browser, clientId: string, redirect: string, lang?: string) {
  const start = await browser.get(
    authorizeUrl({ clientId, redirectUri: redirect }, { scope: 'openid profile' }),
  );
  expect(start.statusCode).toBe(302);
  const location = String(start.headers.location);
  expect(location).toMatch(/^\/signin\?request=/);
  return { location, page: await browser.get(lang ? `${location}&lang=${lang}` : location) };
}

describe('the sign-in page of an authorization request', () => {
  it('names the app, escaped, and shows its logo at a fixed size with alt text', async () => {
    const { page } = await signInPageOf(new Browser(t.app), withLogo, redirectUri);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(
      '<img class="client-logo" src="https://cdn.games.example/logo.png?size=128&amp;v=%222%22" alt="Logo of Northwind &lt;Games&gt; &amp; &#34;Co&#34;" width="64" height="64">',
    );
    expect(page.body).toContain(
      '<p class="continue-to">to continue to Northwind &lt;Games&gt; &amp; &#34;Co&#34;</p>',
    );
    expect(page.body).not.toContain('<Games>');
    expect(page.headers['content-security-policy']).toContain(
      "img-src 'self' data: https://cdn.games.example;",
    );
  });

  it('says it in Russian too', async () => {
    const { page } = await signInPageOf(new Browser(t.app), withLogo, redirectUri, 'ru');
    expect(page.body).toContain('<html lang="ru">');
    expect(page.body).toContain('чтобы продолжить в «Northwind &lt;Games&gt; &amp; &#34;Co&#34;»');
    expect(page.body).toContain('alt="Логотип «Northwind &lt;Games&gt; &amp; &#34;Co&#34;»"');
  });

  it('names an app without a logo, with no image and no other origin in the CSP', async () => {
    const { page } = await signInPageOf(new Browser(t.app), withoutLogo, 'https://plain.example/cb');
    expect(page.body).toContain('<p class="continue-to">to continue to Plain Site</p>');
    expect(page.body).not.toContain('client-logo');
    expect(page.headers['content-security-policy']).toContain("img-src 'self' data:;");
  });

  it('names nothing on a plain sign-in, or for an unknown request', async () => {
    for (const url of ['/signin', '/signin?request=unknown-request-id']) {
      const page = await new Browser(t.app).get(url);
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('continue-to');
      expect(page.headers['content-security-policy']).toContain("img-src 'self' data:;");
    }
  });

  it('names the app again when the password was wrong', async () => {
    const browser = new Browser(t.app);
    const { location } = await signInPageOf(browser, withLogo, redirectUri);
    const wrong = await browser.submit(location, '/signin', { username: user.username, password: 'nope' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('to continue to Northwind');
    expect(wrong.headers['content-security-policy']).toContain('https://cdn.games.example');
  });
});

describe('the consent page', () => {
  it('shows the logo with alt text, and admits its origin for this page only', async () => {
    const browser = new Browser(t.app);
    const { location } = await signInPageOf(browser, withLogo, redirectUri);
    const signedIn = await browser.signIn(user, location);
    const consent = await browser.get(String(signedIn.headers.location));
    expect(consent.statusCode).toBe(200);
    expect(consent.body).toContain(
      '<img class="client-logo" src="https://cdn.games.example/logo.png?size=128&amp;v=%222%22"',
    );
    expect(consent.body).toContain(
      'alt="Logo of Northwind &lt;Games&gt; &amp; &#34;Co&#34;" width="64" height="64"',
    );
    expect(consent.headers['content-security-policy']).toContain(
      "img-src 'self' data: https://cdn.games.example;",
    );
    // The account page of the same browser does not admit it.
    const account = await browser.get('/account');
    expect(account.headers['content-security-policy']).not.toContain('cdn.games.example');
  });

  it('follows a logo changed or removed with idp clients update', async () => {
    const ctx = { config: t.config, clock: t.clock };
    await updateClient(t.database.db, ctx, withoutLogo, { logoUri: 'http://127.0.0.1:8099/logo.svg' });
    await t.sync();
    const { page } = await signInPageOf(new Browser(t.app), withoutLogo, 'https://plain.example/cb');
    expect(page.body).toContain('src="http://127.0.0.1:8099/logo.svg"');
    expect(page.headers['content-security-policy']).toContain("img-src 'self' data: http://127.0.0.1:8099;");
    await updateClient(t.database.db, ctx, withoutLogo, { logoUri: '' });
    await t.sync();
    const after = await signInPageOf(new Browser(t.app), withoutLogo, 'https://plain.example/cb');
    expect(after.page.body).not.toContain('client-logo');
  });
});
