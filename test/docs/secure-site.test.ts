import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSite } from '../../docs/snippets/oauth4webapi.js';
import type { Context } from '../../src/context.js';
import { systemClock } from '../../src/lib/clock.js';
import { BackchannelLogoutWorker } from '../../src/modules/backchannel/logout.worker.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { credit } from '../../src/modules/wallet/wallet.service.js';
import { makeUser, type TestUser } from '../helpers/factories.js';
import { hiddenFields } from '../helpers/html.js';
import { listen, type Provider, startProvider, UserAgent } from './helpers.js';

/**
 * The guide's security-minded site (docs/snippets/oauth4webapi.ts), driven by oauth4webapi against
 * the service on a real port: PAR + PKCE, DPoP-bound tokens, userinfo and a wallet charge with
 * DPoP, a DPoP refresh, RP-initiated logout back to the site, and a back-channel logout token
 * that reaches the site's endpoint and ends its session. Then what an attacker holding one of the
 * site's requests can do with it: nothing.
 */
let provider: Provider;
let user: TestUser;
let site: Awaited<ReturnType<typeof createSite>>;
let origin: string;
let closeSite: () => Promise<void>;
const realFetch = globalThis.fetch;
/** The listening provider runs on the real clock (the site checks token times against its own). */
const serverContext = (): Context => ({ config: provider.t.config, clock: systemClock });
/** The requests the site sent to the provider's userinfo endpoint, with their answers' status. */
const userinfoCalls: Array<{ headers: Headers; status: number }> = [];

beforeAll(async () => {
  provider = await startProvider();
  user = await makeUser(provider.t);
  await credit(provider.t.database.db, serverContext(), { username: user.username, amount: 100 });
  let app: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  const listening = await listen((request, response) => {
    if (app) app(request, response);
    else response.writeHead(503).end();
  });
  origin = listening.origin;
  closeSite = listening.close;
  const client = await createClient(provider.t.database.db, serverContext(), {
    name: 'Secure Shop',
    siteUrl: origin,
    redirectUris: [`${origin}/callback`],
    postLogoutRedirectUris: [`${origin}/signed-out`],
    backchannelLogoutUri: `${origin}/backchannel-logout`,
    wallet: true,
    requirePar: true,
    requireDpop: true,
    idTokenAlg: 'ES256',
  });
  // The site and this test share a process: its calls to the provider are watched, not changed.
  globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await realFetch(request.clone());
    if (new URL(request.url).pathname === '/api/v1/oauth/userinfo')
      userinfoCalls.push({ headers: request.headers, status: response.status });
    return response;
  };
  site = await createSite({
    issuer: provider.issuer,
    clientId: client.client_id,
    clientSecret: client.client_secret,
    redirectUri: `${origin}/callback`,
    postLogoutRedirectUri: `${origin}/signed-out`,
    idTokenAlg: 'ES256',
    allowInsecureRequests: true,
  });
  app = site.app;
}, 120_000);

afterAll(async () => {
  globalThis.fetch = realFetch;
  await closeSite?.();
  await provider?.close();
});

const deliverLogouts = () =>
  new BackchannelLogoutWorker(provider.t.database.db, serverContext(), {
    info: () => undefined,
    warn: () => undefined,
  }).drain();

describe('a site with PAR, DPoP and logout (docs/snippets/oauth4webapi.ts)', () => {
  const browser = () => new UserAgent(provider.issuer);
  let ua: UserAgent;

  it('signs in through a pushed request and gets DPoP-bound tokens', async () => {
    ua = browser();
    const arrival = await ua.walk(`${origin}/login`, { user });
    expect(
      arrival.url.href,
      `${arrival.status} ${arrival.body.slice(0, 400)} ${arrival.visited.map((v) => `${v.status} ${v.method} ${v.url.href}`).join('\n')}`,
    ).toBe(`${origin}/`);
    expect(JSON.parse(arrival.body)).toEqual({
      signed_in: true,
      sub: String(user.id),
      username: user.username,
    });
    // The browser carried nothing of the request but its client_id and request_uri (RFC 9126 §4).
    const authorize = arrival.visited.find((visit) => visit.url.pathname === '/api/v1/oauth/authorize');
    expect([...(authorize?.url.searchParams.keys() ?? [])].sort()).toEqual(['client_id', 'request_uri']);
    // The profile was read with the DPoP scheme and a proof bound to the token (RFC 9449 §7).
    const read = userinfoCalls.at(-1);
    expect(read?.status).toBe(200);
    expect(read?.headers.get('authorization')).toMatch(/^DPoP at_/);
    expect(read?.headers.get('dpop')).toBeTruthy();
  });

  it('charges the wallet with DPoP, refreshes with DPoP, and reads the profile again', async () => {
    const charge = await ua.request(new URL('/buy', origin), {
      method: 'POST',
      form: { amount: '2.5', item: 'A sword', order_id: 'order-1' },
    });
    expect(charge.status).toBe(201);
    expect(await charge.json()).toMatchObject({
      ok: true,
      transaction: { type: 'charge', amount: 2.5, description: 'A sword', idempotency_key: 'order-1' },
      balance: 97.5,
    });
    const refreshed = await ua.request(new URL('/refresh', origin), { method: 'POST', form: {} });
    expect(await refreshed.json()).toEqual({ refreshed: true, token_type: 'dpop' });
    const again = await ua.request(new URL('/', origin));
    expect((await again.json()).signed_in).toBe(true);
  });

  it("refuses the site's request replayed, moved to another URL or method, or sent as Bearer", async () => {
    const seen = userinfoCalls.at(-1);
    if (!seen) throw new Error('the site read no profile');
    const authorization = seen.headers.get('authorization') as string;
    const proof = seen.headers.get('dpop') as string;
    const userinfo = `${provider.issuer}/api/v1/oauth/userinfo`;
    const send = (url: string, headers: Record<string, string>, method = 'GET') =>
      realFetch(url, { method, headers });
    const expectRefused = async (response: Response, error: string) => {
      expect(response.status).toBe(401);
      expect((await response.json()).error).toBe(error);
      expect(response.headers.get('www-authenticate')).toContain(`error="${error}"`);
    };
    // RFC 9449 §11.1: a proof is accepted once.
    await expectRefused(await send(userinfo, { authorization, dpop: proof }), 'invalid_dpop_proof');
    // §4.3: htu and htm name the request the proof was made for.
    await expectRefused(
      await send(`${provider.issuer}/api/v1/me`, { authorization, dpop: proof }),
      'invalid_dpop_proof',
    );
    await expectRefused(await send(userinfo, { authorization, dpop: proof }, 'POST'), 'invalid_dpop_proof');
    // §7.1: a bound token is no bearer token.
    const token = authorization.replace(/^DPoP /, '');
    await expectRefused(await send(userinfo, { authorization: `Bearer ${token}` }), 'invalid_token');
  });

  it('signs out at the provider and comes back to the site (RP-initiated logout)', async () => {
    const arrival = await ua.walk(`${origin}/logout`);
    expect(arrival.visited.map((visit) => visit.url.pathname)).toContain('/api/v1/oauth/logout');
    // The id_token_hint named this session: no confirmation page, straight back with the state.
    expect(arrival.url.pathname).toBe('/signed-out');
    expect(JSON.parse(arrival.body)).toEqual({ signed_out: true });
    const account = await ua.request(new URL('/account', provider.issuer));
    expect(account.status).toBe(302);
    expect(account.headers.get('location')).toMatch(/^\/signin/);
    // The provider told the site too; it had already forgotten the session.
    expect(await deliverLogouts()).toBe(1);
    expect(site.sessionCount()).toBe(0);
  });

  it('is signed out by a back-channel logout token when the user signs out at the provider', async () => {
    ua = browser();
    const arrival = await ua.walk(`${origin}/login`, { user });
    expect(JSON.parse(arrival.body).signed_in).toBe(true);
    expect(site.sessionCount()).toBe(1);
    const page = await ua.request(new URL('/account', provider.issuer));
    const signOut = await ua.request(new URL('/signout', provider.issuer), {
      method: 'POST',
      form: hiddenFields(await page.text(), '/signout'),
    });
    expect(signOut.status).toBe(303);
    // The logout token is queued with the sign-out; the worker delivers it to the site, which
    // verifies it against the provider's JWKS and ends the session it names.
    expect(await deliverLogouts()).toBe(1);
    expect(site.sessionCount()).toBe(0);
    const after = await ua.request(new URL('/', origin));
    expect(after.status).toBe(401);
  });
});
