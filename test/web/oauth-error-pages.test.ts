import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { unescapeHtml } from '../helpers/browser.js';
import { makeClient, type TestClient } from '../helpers/factories.js';
import { authorizeUrl } from '../helpers/http.js';

/**
 * The error pages of an OAuth flow (docs/pages.md "Error pages"): the unregistered redirect_uri
 * shows the value received, escaped, beside the registered ones' hosts; a 429 met in the flow
 * links back to the sign-in of that authorization request.
 */
let t: TestApp;
let client: TestClient;
beforeAll(async () => {
  // One refused form a minute (sign-in limit), twelve requests a minute (public limit), per address.
  t = await createTestApp({ env: { RATE_LIMIT_SIGNIN_PER_MIN: '1', RATE_LIMIT_PUBLIC_PER_MIN: '12' } });
  client = await makeClient(t, {
    // A native app's scheme is registered only for a client whose site is not https.
    siteUrl: 'http://127.0.0.1:8080',
    redirectUris: [
      'https://site.example/callback',
      'https://site.example/other',
      'http://127.0.0.1:8080/cb',
      'com.example.app:/oauth',
    ],
  });
});
afterAll(() => t.close());

let address = 0;
/** A visitor of its own (the limits count per address). */
function visitor() {
  address += 1;
  const remoteAddress = `203.0.113.${address}`;
  return {
    get: (url: string, lang = 'en') =>
      t.app.inject({ method: 'GET', url, remoteAddress, headers: { 'accept-language': lang } }),
    post: (url: string, form: Record<string, string>, lang = 'en') =>
      t.app.inject({
        method: 'POST',
        url,
        remoteAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': lang },
        payload: new URLSearchParams(form).toString(),
      }),
  };
}

/** The href of the link whose text is `text`, unescaped, or undefined. */
function linkTo(res: LightMyRequestResponse, text: string): string | undefined {
  const match = new RegExp(`<a href="([^"]*)">${text}</a>`).exec(res.body);
  return match?.[1] === undefined ? undefined : unescapeHtml(match[1]);
}

const detailsOf = (res: LightMyRequestResponse) =>
  /<dl class="details redirect-uri">([\s\S]*?)<\/dl>/.exec(res.body)?.[1] ?? '';

describe('the unregistered redirect_uri page', () => {
  it('shows the value received, escaped, beside the hosts of the registered ones', async () => {
    const received = 'https://evil.example/cb?next="><script>alert(1)</script>&x=1';
    const res = await visitor().get(authorizeUrl({ ...client, redirectUri: received }));
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('<script>alert(1)</script>');
    const details = detailsOf(res);
    expect(details).toContain('The address the request asked to return to (redirect_uri):');
    expect(details).toContain(
      '<code class="url">https://evil.example/cb?next=&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;x=1</code>',
    );
    expect(details).toContain('The addresses registered for this app are on:');
    // Each host once, the port kept, a native app's scheme by itself; never the registered paths.
    const hosts = [...details.matchAll(/<dd>(.*)<\/dd>/g)][1]?.[1] ?? '';
    expect([...hosts.matchAll(/<code class="url">([^<]*)<\/code>/g)].map((m) => m[1])).toEqual([
      'site.example',
      '127.0.0.1:8080',
      'com.example.app:',
    ]);
    expect(details).not.toContain('/callback');
    // The technical detail stays.
    expect(res.body).toContain('The redirect_uri is not registered for this application.');
  });

  it('says it in Russian, and cuts a very long value', async () => {
    const received = `https://site.example/${'a'.repeat(1900)}`;
    const res = await visitor().get(authorizeUrl({ ...client, redirectUri: received }), 'ru');
    expect(res.statusCode).toBe(400);
    const details = detailsOf(res);
    expect(details).toContain('Адрес возврата в запросе (redirect_uri):');
    expect(details).toContain('Зарегистрированные адреса приложения находятся на:');
    expect(details).toContain(`<code class="url">${received.slice(0, 500)}…</code>`);
  });

  it('is not shown for the other problems of a request that cannot be answered by a redirect', async () => {
    const missing = await visitor().get(authorizeUrl({ ...client, redirectUri: '' }));
    expect(missing.statusCode).toBe(400);
    expect(missing.body).not.toContain('redirect-uri');
    const unknownClient = await visitor().get(
      authorizeUrl({ clientId: 'pk_unknown', redirectUri: 'https://x' }),
    );
    expect(unknownClient.body).not.toContain('redirect-uri');
  });
});

describe('the 429 page in an OAuth flow', () => {
  /** An authorization request waiting for sign-in: its sign-in page's path. */
  async function pendingSignIn(as: ReturnType<typeof visitor>): Promise<{ path: string; id: string }> {
    const res = await as.get(authorizeUrl(client, { scope: 'openid' }));
    expect(res.statusCode).toBe(302);
    const path = String(res.headers.location);
    const id = new URL(path, 'http://x').searchParams.get('request');
    expect(id).toBeTruthy();
    return { path, id: id as string };
  }

  it('links back to the sign-in of the request whose form was refused, in both languages', async () => {
    const as = visitor();
    const { path, id } = await pendingSignIn(as);
    const form = { csrf_token: 'x', request: id, username: 'someone', password: 'wrong' };
    expect((await as.post('/signin', form)).statusCode).toBe(403);
    const refused = await as.post('/signin', form);
    expect(refused.statusCode).toBe(429);
    expect(linkTo(refused, 'Back to sign-in')).toBe(path);
    expect(path).toBe(`/signin?request=${encodeURIComponent(id)}`);
    const russian = await as.post('/signin', form, 'ru');
    expect(linkTo(russian, 'Вернуться ко входу')).toBe(path);
  });

  it('links back from the second step and the consent form too, and from a page of the request', async () => {
    const as = visitor();
    const { path, id } = await pendingSignIn(as);
    await as.post('/signin/second-factor', { csrf_token: 'x', request: id, code: '000000' });
    const step = await as.post('/signin/second-factor', { csrf_token: 'x', request: id, code: '000000' });
    expect(step.statusCode).toBe(429);
    expect(linkTo(step, 'Back to sign-in')).toBe(path);
    const decision = await as.post('/api/v1/oauth/authorize/decision', { csrf_token: 'x', request: id });
    expect(decision.statusCode).toBe(429);
    expect(linkTo(decision, 'Back to sign-in')).toBe(path);
    // The public limit: the pages of the request themselves.
    let page: LightMyRequestResponse | undefined;
    for (let i = 0; i < 15 && page?.statusCode !== 429; i++) page = await as.get(path);
    expect(page?.statusCode).toBe(429);
    expect(linkTo(page as LightMyRequestResponse, 'Back to sign-in')).toBe(path);
  });

  it('links the authorization endpoint back to the same request', async () => {
    const as = visitor();
    const url = authorizeUrl(client, { scope: 'openid', state: 'again' });
    let res: LightMyRequestResponse | undefined;
    for (let i = 0; i < 15 && res?.statusCode !== 429; i++) res = await as.get(url);
    expect(res?.statusCode).toBe(429);
    expect(linkTo(res as LightMyRequestResponse, 'Back to sign-in')).toBe(url);
  });

  it('offers no such link outside a flow, or for what is not a request id', async () => {
    const as = visitor();
    const form = { csrf_token: 'x', username: 'someone', password: 'wrong' };
    await as.post('/signin', form);
    const plain = await as.post('/signin', form);
    expect(plain.statusCode).toBe(429);
    expect(plain.body).not.toContain('Back to sign-in');
    const forged = await as.post('/signin', { ...form, request: '//evil.example/x' });
    expect(forged.statusCode).toBe(429);
    expect(forged.body).not.toContain('Back to sign-in');
  });
});
