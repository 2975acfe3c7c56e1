import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSite } from '../../docs/snippets/oauth4webapi.js';
import type { Context } from '../../src/context.js';
import { systemClock } from '../../src/lib/clock.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { makeUser, type TestUser } from '../helpers/factories.js';
import { listen, type Provider, startProvider, UserAgent } from './helpers.js';

/**
 * What an attacker holding one of the requests of the guide's security-minded site
 * (docs/snippets/oauth4webapi.ts) can do with it: nothing. The site runs in this process, so that
 * its requests to the provider can be watched; snippets.test.ts runs it with `node` as the guide
 * says, through the whole of its sign-in, wallet, refresh and logout.
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

describe('the requests of a site with PAR and DPoP (docs/snippets/oauth4webapi.ts)', () => {
  it('signs in through a pushed request and gets DPoP-bound tokens', async () => {
    const arrival = await new UserAgent(provider.issuer).walk(`${origin}/login`, { user });
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
});
