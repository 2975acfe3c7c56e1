import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmTotpEnrolment, startTotpEnrolment, totpKeyOf } from '../../src/modules/mfa/totp.service.js';
import { totpCodeAt } from '../../src/modules/mfa/totp-code.js';
import { contentSecurityPolicy, formActionSource } from '../../src/web/page-headers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser } from '../helpers/browser.js';
import { depsOf, makeClient, makeUser, type TestClient, type TestUser } from '../helpers/factories.js';
import { authorizeUrl } from '../helpers/http.js';

/*
 * The pages' CSP form-action (CSP Level 3 §6.4.1): every page's forms post only to this origin, and
 * the pages of an app's request also admit where that request returns, because form-action governs
 * the redirects after a POST as well (Chromium blocks them; test/e2e/oauth-browser.test.ts walks
 * them in the browser): the consent form's 303 to the redirect_uri, a sign-in or second step that
 * resumes a request whose consent is remembered, and the logout confirmation's 303 to the site's
 * post_logout_redirect_uri. No other page names another origin.
 */

let t: TestApp;
let site: TestClient;
let native: TestClient;
const SIGNED_OUT = 'https://site.example/signed-out';

beforeAll(async () => {
  t = await createTestApp();
  site = await makeClient(t, {
    redirectUris: ['https://app.site.example:8443/callback'],
    postLogoutRedirectUris: [SIGNED_OUT],
  });
  // A native app (RFC 8252 §7.1): a private-use scheme, allowed for a site that is not https.
  native = await makeClient(t, {
    siteUrl: 'http://127.0.0.1:9',
    redirectUris: ['com.example.app:/oauth2redirect'],
  });
});
afterAll(() => t.close());

function formAction(res: LightMyRequestResponse): string {
  const csp = String(res.headers['content-security-policy']);
  const directive = csp.split('; ').find((each) => each.startsWith('form-action '));
  expect(directive, csp).toBeDefined();
  return directive as string;
}

async function signedIn(): Promise<{ user: TestUser; browser: Browser }> {
  const user = await makeUser(t);
  const browser = new Browser(t.app);
  await browser.signIn(user);
  return { user, browser };
}

/** The sign-in page of a pending request of `client`, opened by an anonymous browser. */
async function signInPageOf(client: TestClient, browser = new Browser(t.app)) {
  const started = await browser.get(authorizeUrl(client, { scope: 'openid' }));
  expect(started.statusCode).toBe(302);
  const location = String(started.headers.location);
  expect(location).toMatch(/^\/signin\?request=/);
  return { browser, location, page: await browser.get(location) };
}

describe("the pages' form-action", () => {
  it("is 'self' alone on the pages of no app's request", async () => {
    const anonymous = new Browser(t.app);
    for (const path of ['/signin', '/signup', '/password/forgot']) {
      const res = await anonymous.get(path);
      expect(res.statusCode, path).toBe(200);
      expect(formAction(res), path).toBe("form-action 'self'");
    }
    const { browser } = await signedIn();
    for (const path of ['/account', '/account/password', '/account/profile']) {
      const res = await browser.get(path);
      expect(res.statusCode, path).toBe(200);
      expect(formAction(res), path).toBe("form-action 'self'");
    }
    const error = await anonymous.get('/api/v1/oauth/authorize?response_type=code&client_id=pk_unknown');
    expect(error.statusCode).toBe(400);
    expect(formAction(error)).toBe("form-action 'self'");
  });

  it("adds the redirect_uri's origin on the consent page, whose decision is redirected there", async () => {
    const { browser } = await signedIn();
    const consent = await browser.get(authorizeUrl(site, { scope: 'openid' }));
    expect(consent.statusCode).toBe(200);
    expect(consent.body).toContain('action="/api/v1/oauth/authorize/decision"');
    expect(formAction(consent)).toBe("form-action 'self' https://app.site.example:8443");
  });

  it('adds it on the sign-in and second-step pages of a request, which may resume straight to the app', async () => {
    const { page } = await signInPageOf(site);
    expect(page.statusCode).toBe(200);
    expect(formAction(page)).toBe("form-action 'self' https://app.site.example:8443");

    // An account with an authenticator app: the password leads to the second step of the request.
    const user = await makeUser(t);
    const { db, ctx } = depsOf(t);
    await startTotpEnrolment(db, ctx, { userId: user.id, ip: null });
    const key = (await totpKeyOf(db, ctx, user.id))?.key as string;
    const code = totpCodeAt(key, t.clock.now());
    expect((await confirmTotpEnrolment(db, ctx, { userId: user.id, code, ip: null, locale: 'en' })).ok).toBe(
      true,
    );
    const { browser, location } = await signInPageOf(site);
    const step = await browser.signIn(user, location);
    expect(String(step.headers.location)).toMatch(/^\/signin\/second-factor\?request=/);
    const stepPage = await browser.get(String(step.headers.location));
    expect(stepPage.statusCode).toBe(200);
    expect(formAction(stepPage)).toBe("form-action 'self' https://app.site.example:8443");
  });

  it("names a native app's private-use scheme, not an origin", async () => {
    const { page } = await signInPageOf(native);
    expect(formAction(page)).toBe("form-action 'self' com.example.app:");
  });

  it("adds the post_logout_redirect_uri's origin on the logout confirmation, whose answer goes there", async () => {
    const { browser } = await signedIn();
    const query = new URLSearchParams({
      client_id: site.clientId,
      post_logout_redirect_uri: SIGNED_OUT,
      state: 'bye',
    });
    const confirmation = await browser.get(`/api/v1/oauth/logout?${query}`);
    expect(confirmation.statusCode).toBe(200);
    expect(confirmation.body).toContain('action="/api/v1/oauth/logout/confirm"');
    expect(formAction(confirmation)).toBe("form-action 'self' https://site.example");
    // Without a return address the answer stays here.
    const bare = await browser.get(`/api/v1/oauth/logout?client_id=${site.clientId}`);
    expect(formAction(bare)).toBe("form-action 'self'");
  });
});

describe('formActionSource', () => {
  it('is the origin of an http(s) URI, the scheme of a private-use one, and nothing else', () => {
    expect(formActionSource('https://site.example/cb?x=1#f')).toBe('https://site.example');
    expect(formActionSource('http://127.0.0.1:8080/cb')).toBe('http://127.0.0.1:8080');
    expect(formActionSource('com.example.app:/cb')).toBe('com.example.app:');
    expect(formActionSource('not a uri')).toBeNull();
    expect(formActionSource('')).toBeNull();
  });

  it('never lets a target add a directive or another source', () => {
    const csp = contentSecurityPolicy({ forms: ["https://a.example/x; script-src 'unsafe-inline'", 'x y'] });
    expect(csp).not.toContain('unsafe-inline');
    expect(csp.split('; ').filter((each) => each.startsWith('script-src'))).toEqual(["script-src 'self'"]);
  });
});
