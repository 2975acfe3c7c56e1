import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authConfig, handleAuth } from '../../docs/snippets/authjs.js';
import { createSite as createOpenidClientSite } from '../../docs/snippets/openid-client.js';
import { createSite as createPassportSite } from '../../docs/snippets/passport.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../helpers/factories.js';
import { listen, type Provider, startProvider, UserAgent } from './helpers.js';

/**
 * The guide's three snippets (docs/snippets/), each run as a site would run it against the service
 * listening on a real port: the site's login route, the provider's sign-in and consent pages
 * (filled over plain HTTP), the redirect back to the site's callback, and what the site then knows
 * of the user.
 */
let provider: Provider;
let user: TestUser;
const cleanup: Array<() => Promise<unknown>> = [];

// A fresh embedded database takes a while to migrate on a busy machine: more than the default hook time.
beforeAll(async () => {
  provider = await startProvider();
  user = await makeUser(provider.t);
}, 120_000);
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
  await provider?.close();
});

/** A site (an Express app) listening on 127.0.0.1, and a client registered for its callback. */
async function startSite(
  build: (
    origin: string,
    client: (redirectUri: string) => Promise<TestClient>,
  ) => Promise<(request: IncomingMessage, response: ServerResponse) => void>,
): Promise<{ origin: string }> {
  let app: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  const site = await listen((request, response) => {
    if (app) app(request, response);
    else response.writeHead(503).end();
  });
  cleanup.push(site.close);
  app = await build(site.origin, (redirectUri) =>
    makeClient(provider.t, { redirectUris: [redirectUri], siteUrl: site.origin }),
  );
  return { origin: site.origin };
}

function expectThroughProvider(visited: Array<{ method: string; url: URL }>, callbackPath: string): void {
  const paths = visited.map((visit) => `${visit.method} ${visit.url.pathname}`);
  expect(paths).toContain('GET /api/v1/oauth/authorize');
  expect(paths).toContain('POST /signin');
  expect(paths).toContain('POST /api/v1/oauth/authorize/decision');
  expect(paths).toContain(`GET ${callbackPath}`);
}

describe('openid-client (docs/snippets/openid-client.ts)', () => {
  let origin: string;

  beforeAll(async () => {
    ({ origin } = await startSite(async (siteOrigin, register) => {
      const client = await register(`${siteOrigin}/callback`);
      return createOpenidClientSite({
        issuer: provider.issuer,
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        redirectUri: client.redirectUri,
        sessionSecret: 'test session secret',
        // The provider of this test is plain http on 127.0.0.1; production issuers are https.
        allowInsecureRequests: true,
      });
    }));
  });

  it('signs the user in: the site knows their sub and username', async () => {
    const browser = new UserAgent(provider.issuer);
    const arrival = await browser.walk(`${origin}/login`, { user });
    expectThroughProvider(arrival.visited, '/callback');
    expect(arrival.url.href).toBe(`${origin}/`);
    expect(arrival.status).toBe(200);
    const page = JSON.parse(arrival.body);
    expect(page).toMatchObject({ signed_in: true, sub: String(user.id), username: user.username });
    expect(page.profile.email).toBe(`${user.username}@example.com`);

    // Sign-out revokes the access token at the provider.
    const live = await provider.t.database.db
      .selectFrom('access_tokens')
      .select('revoked_at')
      .where('user_id', '=', user.id)
      .execute();
    expect(live.some((row) => row.revoked_at === null)).toBe(true);
    const out = await browser.walk(`${origin}/logout`, { method: 'POST' });
    expect(out.status).toBe(401);
    const after = await provider.t.database.db
      .selectFrom('access_tokens')
      .select('revoked_at')
      .where('user_id', '=', user.id)
      .execute();
    expect(after.every((row) => row.revoked_at !== null)).toBe(true);
  });

  it('lands a denial on the site as cancelled, signed out', async () => {
    const browser = new UserAgent(provider.issuer);
    // A user who has not allowed this site yet, so the consent page shows.
    const stranger = await makeUser(provider.t);
    const arrival = await browser.walk(`${origin}/login`, { user: stranger, decision: 'deny' });
    expect(arrival.url.pathname).toBe('/');
    expect(arrival.url.searchParams.get('signin')).toBe('cancelled');
    expect(arrival.status).toBe(401);
  });
});

describe('passport-oauth2 (docs/snippets/passport.ts)', () => {
  let origin: string;

  beforeAll(async () => {
    ({ origin } = await startSite(async (siteOrigin, register) => {
      const client = await register(`${siteOrigin}/callback`);
      return createPassportSite({
        issuer: provider.issuer,
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        redirectUri: client.redirectUri,
        sessionSecret: 'test session secret',
      });
    }));
  });

  it('signs the user in: the site knows their sub and username', async () => {
    const browser = new UserAgent(provider.issuer);
    const arrival = await browser.walk(`${origin}/login`, { user });
    expectThroughProvider(arrival.visited, '/callback');
    const authorize = arrival.visited.find((visit) => visit.url.pathname === '/api/v1/oauth/authorize');
    expect(authorize?.url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize?.url.searchParams.get('state')).toBeTruthy();
    expect(arrival.url.href).toBe(`${origin}/`);
    expect(JSON.parse(arrival.body)).toMatchObject({
      signed_in: true,
      sub: String(user.id),
      username: user.username,
    });
  });

  it('checks state: a callback with another state, or in another browser, signs nobody in', async () => {
    const browser = new UserAgent(provider.issuer);
    const atCallback = (url: URL) => url.origin === origin && url.pathname === '/callback';
    const stopped = await browser.walk(`${origin}/login`, { user, stopBefore: atCallback });
    const callback = stopped.url;
    expect(callback.searchParams.get('code')).toMatch(/^ac_/);

    // Another browser (no sign-in started there) brings the genuine callback.
    const elsewhere = await new UserAgent(provider.issuer).walk(callback);
    expect(elsewhere.url.searchParams.get('signin')).toBe('failed');
    expect(elsewhere.status).toBe(401);

    // The browser that started it brings another state (which uses its stored state up).
    const forged = new URL(callback);
    forged.searchParams.set('state', 'forged-state');
    const refused = await browser.walk(forged);
    expect(refused.url.searchParams.get('signin')).toBe('failed');
    expect(refused.status).toBe(401);
    const retried = await browser.walk(callback);
    expect(retried.url.searchParams.get('signin')).toBe('failed');
  });
});

describe('Auth.js (docs/snippets/authjs.ts)', () => {
  const origin = 'http://127.0.0.1:4000';
  let browser: UserAgent;

  beforeAll(async () => {
    const client = await makeClient(provider.t, {
      redirectUris: [`${origin}/auth/callback/idp`],
      siteUrl: origin,
    });
    const config = authConfig({
      issuer: provider.issuer,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      secret: 'a test secret of at least thirty-two characters',
    });
    // The site, in-process: /auth/… is Auth.js, anything else a home page.
    const site = async (request: Request): Promise<Response> =>
      new URL(request.url).pathname.startsWith('/auth/')
        ? handleAuth(request, config)
        : new Response('home', { headers: { 'content-type': 'text/plain' } });
    browser = new UserAgent(provider.issuer, { [origin]: site });
  });

  it('signs the user in: the session carries their id and username', async () => {
    const csrf = await browser.request(new URL(`${origin}/auth/csrf`));
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const arrival = await browser.walk(`${origin}/auth/signin/idp`, {
      method: 'POST',
      form: { csrfToken, callbackUrl: `${origin}/` },
      user,
    });
    expectThroughProvider(arrival.visited, '/auth/callback/idp');
    const authorize = arrival.visited.find((visit) => visit.url.pathname === '/api/v1/oauth/authorize');
    for (const parameter of ['state', 'nonce', 'code_challenge']) {
      expect(authorize?.url.searchParams.get(parameter)).toBeTruthy();
    }
    expect(arrival.url.href).toBe(`${origin}/`);
    expect(arrival.body).toBe('home');

    const session = (await (await browser.request(new URL(`${origin}/auth/session`))).json()) as {
      user?: Record<string, unknown>;
    };
    expect(session.user).toMatchObject({
      id: String(user.id),
      username: user.username,
      name: `Display ${user.username}`,
      email: `${user.username}@example.com`,
    });
  });
});
