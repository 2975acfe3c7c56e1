import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s256 } from '../../../src/lib/pkce.js';
import { updateClient } from '../../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { depsOf, makeClient, makeUser, type TestClient, type TestUser } from '../../helpers/factories.js';
import { authorizeUrl, basic, exchangeCode, postForm } from '../../helpers/http.js';

/*
 * The authorization endpoint with a pushed request (RFC 9126 §4): client_id and request_uri alone,
 * taken once, within 60 seconds, by its own client; and clients that must use PAR.
 */

let t: TestApp;
let client: TestClient;
let user: TestUser;

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t, { wallet: true });
  user = await makeUser(t);
});
afterAll(() => t.close());

async function push(as: TestClient, params: Record<string, string> = {}): Promise<string> {
  const res = await postForm(
    t.app,
    '/api/v1/oauth/par',
    {
      response_type: 'code',
      redirect_uri: as.redirectUri,
      state: 'st-pushed',
      scope: 'openid profile',
      code_challenge: s256(VERIFIER),
      code_challenge_method: 'S256',
      nonce: 'n-pushed',
      ...params,
    },
    { authorization: basic(as) },
  );
  expect(res.statusCode).toBe(201);
  return res.json().request_uri;
}

const pushedUrl = (as: TestClient, requestUri: string, extra: Record<string, string> = {}) =>
  `/api/v1/oauth/authorize?${new URLSearchParams({ client_id: as.clientId, request_uri: requestUri, ...extra })}`;

/** The redirect back to the client, parsed. */
function callback(res: LightMyRequestResponse, c: TestClient = client): URLSearchParams {
  expect([302, 303]).toContain(res.statusCode);
  const location = new URL(res.headers.location as string);
  expect(`${location.origin}${location.pathname}`).toBe(c.redirectUri);
  expect(location.searchParams.get('iss')).toBe(t.config.PUBLIC_URL);
  return location.searchParams;
}

function expectRequestPage(res: LightMyRequestResponse): void {
  expect(res.statusCode).toBe(400);
  expect(res.headers.location).toBeUndefined();
  expect(res.headers['content-type']).toMatch(/^text\/html/);
}

/** A browser signed in as `user` that has allowed `as` the pushed scopes (again). */
async function consentedBrowser(as: TestClient): Promise<Browser> {
  const browser = new Browser(t.app);
  await browser.signIn(user);
  const page = await browser.get(pushedUrl(as, await push(as, { prompt: 'consent' })));
  expect(page.statusCode).toBe(200);
  const hidden = hiddenFields(page.body, '/api/v1/oauth/authorize/decision');
  callback(await browser.post('/api/v1/oauth/authorize/decision', { ...hidden, decision: 'allow' }), as);
  return browser;
}

describe('authorize with a request_uri', () => {
  it('runs PAR → authorize → sign-in → consent → code → token, with PKCE and the pushed nonce', async () => {
    const browser = new Browser(t.app);
    const requestUri = await push(client, { scope: 'openid profile email' });
    const start = await browser.get(pushedUrl(client, requestUri));
    expect(start.statusCode).toBe(302);
    const signinUrl = start.headers.location as string;
    expect(signinUrl).toMatch(/^\/signin\?request=/);

    const signedIn = await browser.signIn(user, signinUrl);
    const resume = signedIn.headers.location as string;
    expect(resume).toMatch(/^\/api\/v1\/oauth\/authorize\/resume\?request=/);
    const page = await browser.get(resume);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('name="decision"');
    const hidden = hiddenFields(page.body, '/api/v1/oauth/authorize/decision');
    const decided = await browser.post('/api/v1/oauth/authorize/decision', {
      ...hidden,
      decision: 'allow',
      share_email: '1',
    });
    const params = callback(decided);
    expect(params.get('state')).toBe('st-pushed');
    const code = params.get('code') as string;

    expect((await exchangeCode(t.app, client, code, { code_verifier: 'wrong'.repeat(9) })).statusCode).toBe(
      400,
    );
    const tokens = await exchangeCode(t.app, client, code, { code_verifier: VERIFIER });
    expect(tokens.statusCode).toBe(200);
    const body = tokens.json();
    expect(body.scope).toBe('openid profile email');
    const idToken = JSON.parse(Buffer.from(body.id_token.split('.')[1], 'base64url').toString('utf8'));
    expect(idToken).toMatchObject({ nonce: 'n-pushed', aud: client.clientId, sub: String(user.id) });
  });

  it('uses the pushed parameters and ignores any others sent beside client_id and request_uri', async () => {
    const browser = await consentedBrowser(client);
    const requestUri = await push(client, { state: 'pushed-state', scope: 'openid' });
    const res = await browser.get(
      pushedUrl(client, requestUri, {
        redirect_uri: 'https://evil.example/callback',
        state: 'query-state',
        scope: 'openid wallet',
        response_type: 'token',
        prompt: 'consent',
      }),
    );
    const params = callback(res);
    expect(params.get('state')).toBe('pushed-state');
    const tokens = (
      await exchangeCode(t.app, client, params.get('code') as string, { code_verifier: VERIFIER })
    ).json();
    expect(tokens.scope).toBe('openid');
  });

  it('is single use: the same URL again gets the error page, even mid-flow, while the flow carries on', async () => {
    const browser = new Browser(t.app);
    const url = pushedUrl(client, await push(client, { prompt: 'consent' }));
    const start = await browser.get(url);
    expect(start.headers.location).toMatch(/^\/signin\?request=/);
    const reload = await browser.get(url);
    expectRequestPage(reload);
    expect(reload.body).toContain('This request has expired');
    const signedIn = await browser.signIn(user, start.headers.location as string);
    expect((await browser.get(signedIn.headers.location as string)).statusCode).toBe(200);
    expectRequestPage(await browser.get(url));
  });

  it('is taken once when two requests race for it', async () => {
    const url = pushedUrl(client, await push(client));
    const answers = await Promise.all([0, 1, 2].map(() => t.app.inject({ method: 'GET', url })));
    expect(answers.map((res) => res.statusCode).sort()).toEqual([302, 400, 400]);
  });

  it('expires after 60 seconds', async () => {
    const fresh = await push(client);
    const stale = await push(client);
    t.clock.advance(59_000);
    expect((await t.app.inject({ method: 'GET', url: pushedUrl(client, fresh) })).statusCode).toBe(302);
    t.clock.advance(2_000);
    expectRequestPage(await t.app.inject({ method: 'GET', url: pushedUrl(client, stale) }));
  });

  it("refuses another client's request_uri with a page, and leaves it to its own client", async () => {
    const other = await makeClient(t);
    const requestUri = await push(client);
    expectRequestPage(await t.app.inject({ method: 'GET', url: pushedUrl(other, requestUri) }));
    expect((await t.app.inject({ method: 'GET', url: pushedUrl(client, requestUri) })).statusCode).toBe(302);
  });

  it.each([
    ['an unknown request_uri', (uri: string) => pushedUrl(client, `${uri.slice(0, -4)}AAAA`)],
    ['a request_uri of another shape', () => pushedUrl(client, 'urn:ietf:params:oauth:request_uri:short')],
    [
      'a repeated request_uri',
      (uri: string) => `${pushedUrl(client, uri)}&request_uri=${encodeURIComponent(uri)}`,
    ],
    ['an unknown client_id', (uri: string) => pushedUrl({ ...client, clientId: 'pk_unknown' }, uri)],
    ['no client_id', (uri: string) => `/api/v1/oauth/authorize?request_uri=${encodeURIComponent(uri)}`],
  ])('answers %s with the error page, never a redirect', async (_name, url) => {
    expectRequestPage(await t.app.inject({ method: 'GET', url: url(await push(client)) }));
  });

  it('answers a request object by reference (not a PAR request_uri) as before: request_uri_not_supported', async () => {
    const url = authorizeUrl(client, { request_uri: 'https://site.example/request.jwt' });
    const params = callback(await t.app.inject({ method: 'GET', url }));
    expect(params.get('error')).toBe('request_uri_not_supported');
    expect(params.get('state')).toBe('st-1');
  });

  it('checks the pushed request again against the client as it is now', async () => {
    const changing = await makeClient(t);
    const removedUri = await push(changing);
    await updateClient(t.database.db, depsOf(t).ctx, changing.clientId, {
      removeRedirectUris: [changing.redirectUri],
      addRedirectUris: ['https://site.example/other'],
    });
    // The redirect_uri it was pushed with is no longer registered: a page.
    expectRequestPage(await t.app.inject({ method: 'GET', url: pushedUrl(changing, removedUri) }));

    const walletOnly = await makeClient(t, { wallet: true });
    const pushed = await push(walletOnly, { scope: 'openid wallet', state: 'w' });
    await updateClient(t.database.db, depsOf(t).ctx, walletOnly.clientId, { wallet: false });
    const url = pushedUrl(walletOnly, pushed);
    const params = callback(await t.app.inject({ method: 'GET', url }), walletOnly);
    expect(params.get('error')).toBe('invalid_scope');
    expect(params.get('state')).toBe('w');
    // Answered once: used up like any other.
    expectRequestPage(await t.app.inject({ method: 'GET', url }));
  });

  it('sends the pushed prompt=none problem back with the pushed state', async () => {
    const requestUri = await push(client, { prompt: 'none', state: 'silent' });
    const params = callback(await t.app.inject({ method: 'GET', url: pushedUrl(client, requestUri) }));
    expect(params.get('error')).toBe('login_required');
    expect(params.get('state')).toBe('silent');
  });
});

describe('a client registered with --require-par', () => {
  let strict: TestClient;
  beforeAll(async () => {
    strict = await makeClient(t, { requirePar: true });
  });

  it('gets an authorize request from the query sent back with invalid_request', async () => {
    const params = callback(await t.app.inject({ method: 'GET', url: authorizeUrl(strict) }), strict);
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toMatch(/pushed authorization requests/);
    expect(params.get('state')).toBe('st-1');
  });

  it('still gets the error page for an unregistered redirect_uri', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: authorizeUrl({ ...strict, redirectUri: 'https://evil.example/cb' }),
    });
    expectRequestPage(res);
  });

  it('goes on through PAR', async () => {
    const browser = await consentedBrowser(strict);
    const params = callback(await browser.get(pushedUrl(strict, await push(strict))), strict);
    expect(params.get('code')).toMatch(/^ac_/);
  });

  it('takes requests from the query again once the requirement is lifted', async () => {
    await updateClient(t.database.db, depsOf(t).ctx, strict.clientId, { requirePar: false });
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(strict) });
    expect(res.headers.location).toMatch(/^\/signin\?request=/);
  });
});
