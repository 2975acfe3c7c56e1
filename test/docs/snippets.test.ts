import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guidePath, npmPackages, shellBlock, snippetBlocks } from '../../scripts/snippets.js';
import type { Context } from '../../src/context.js';
import { systemClock } from '../../src/lib/clock.js';
import { BackchannelLogoutWorker } from '../../src/modules/backchannel/logout.worker.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { credit } from '../../src/modules/wallet/wallet.service.js';
import { makeClient, makeUser, type TestUser } from '../helpers/factories.js';
import { hiddenFields } from '../helpers/html.js';
import { freePort } from '../helpers/tcp-proxy.js';
import { insertAccessToken } from '../helpers/tokens.js';
import { type Provider, startProvider, UserAgent } from './helpers.js';
import {
  makeReaderFolder,
  type ReaderFolder,
  type RunningSnippet,
  runSnippet,
  startSnippet,
} from './reader.js';

/**
 * The guide's snippets, run as docs/integrating.md says: from an empty folder made by its
 * `<!-- run:snippet-folder -->` block (one `npm install` for every snippet of this file; from
 * npm's cache it takes about 7 s), each saved as NAME.ts and started with `node NAME.ts`
 * (Node.js 24's type stripping), against the service listening on a real port. Each site is
 * then used as a browser would: its login route, the provider's sign-in and consent pages (filled
 * over plain HTTP), the redirect back to its callback, and what it then knows of the user.
 */
const guide = readFileSync(guidePath, 'utf8');
let provider: Provider;
let folder: ReaderFolder;
let user: TestUser;
const running: RunningSnippet[] = [];
/** The listening provider runs on the real clock (the sites check token times against theirs). */
const serverContext = (): Context => ({ config: provider.t.config, clock: systemClock });

// A fresh embedded database takes a while to migrate on a busy machine, and the folder needs npm.
beforeAll(async () => {
  [provider, folder] = await Promise.all([startProvider(), makeReaderFolder(guide)]);
  user = await makeUser(provider.t);
}, 180_000);
afterAll(async () => {
  for (const snippet of running) await snippet.stop();
  await provider?.close();
  await folder?.remove();
});

/** A site's address on 127.0.0.1 (its PORT and BASE_URL), known before it starts. */
async function siteAddress(): Promise<{ port: string; origin: string }> {
  const port = await freePort();
  return { port: String(port), origin: `http://127.0.0.1:${port}` };
}

async function start(name: string, vars: Record<string, string>): Promise<RunningSnippet> {
  const snippet = await startSnippet(folder, name, { IDP_ISSUER: provider.issuer, ...vars });
  running.push(snippet);
  return snippet;
}

function expectThroughProvider(visited: Array<{ method: string; url: URL }>, callbackPath: string): void {
  const paths = visited.map((visit) => `${visit.method} ${visit.url.pathname}`);
  expect(paths).toContain('GET /api/v1/oauth/authorize');
  expect(paths).toContain('POST /signin');
  expect(paths).toContain('POST /api/v1/oauth/authorize/decision');
  expect(paths).toContain(`GET ${callbackPath}`);
}

describe('the folder the guide makes', () => {
  it('holds what its block made and installs every package a snippet names', () => {
    expect(folder.made).toEqual(['node_modules', 'package-lock.json', 'package.json']);
    const installed = /^npm install (.+)$/m.exec(shellBlock(guide, 'snippet-folder'))?.[1]?.split(/\s+/);
    for (const [name, code] of snippetBlocks(guide)) {
      for (const dependency of npmPackages(code)) expect(installed, `${name}.ts`).toContain(dependency);
    }
    expect([...snippetBlocks(guide).keys()].sort()).toEqual([
      'authjs',
      'device',
      'oauth4webapi',
      'openid-client',
      'passport',
      'wallet',
    ]);
  });
});

describe('openid-client: node openid-client.ts', () => {
  let origin: string;
  let site: RunningSnippet;

  beforeAll(async () => {
    const address = await siteAddress();
    origin = address.origin;
    const client = await makeClient(provider.t, { redirectUris: [`${origin}/callback`], siteUrl: origin });
    site = await start('openid-client', {
      CLIENT_ID: client.clientId,
      CLIENT_SECRET: client.clientSecret,
      PORT: address.port,
      BASE_URL: origin,
    });
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
    const tokens = () =>
      provider.t.database.db
        .selectFrom('access_tokens')
        .select('revoked_at')
        .where('user_id', '=', user.id)
        .execute();
    expect((await tokens()).some((row) => row.revoked_at === null)).toBe(true);
    const out = await browser.walk(`${origin}/logout`, { method: 'POST' });
    expect(out.status).toBe(401);
    expect((await tokens()).every((row) => row.revoked_at !== null)).toBe(true);
  });

  it('lands a denial on the site as cancelled, signed out', async () => {
    // A user who has not allowed this site yet, so the consent page shows.
    const stranger = await makeUser(provider.t);
    const arrival = await new UserAgent(provider.issuer).walk(`${origin}/login`, {
      user: stranger,
      decision: 'deny',
    });
    expect(arrival.url.pathname).toBe('/');
    expect(arrival.url.searchParams.get('signin')).toBe('cancelled');
    expect(arrival.status).toBe(401);
  });

  it('said where to sign in, and wrote nothing on stderr', () => {
    expect(site.stdout()).toBe(`Sign in at ${origin}/login\n`);
    expect(site.stderr()).toBe('');
  });
});

describe('passport-oauth2: node passport.ts', () => {
  let origin: string;
  let site: RunningSnippet;

  beforeAll(async () => {
    const address = await siteAddress();
    origin = address.origin;
    const client = await makeClient(provider.t, { redirectUris: [`${origin}/callback`], siteUrl: origin });
    site = await start('passport', {
      CLIENT_ID: client.clientId,
      CLIENT_SECRET: client.clientSecret,
      PORT: address.port,
      BASE_URL: origin,
    });
  });

  it('signs the user in: the site knows their sub and username', async () => {
    const arrival = await new UserAgent(provider.issuer).walk(`${origin}/login`, { user });
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

  it('wrote nothing on stderr', () => {
    expect(site.stderr()).toBe('');
  });
});

describe('Auth.js: node authjs.ts', () => {
  let origin: string;
  let site: RunningSnippet;

  beforeAll(async () => {
    const address = await siteAddress();
    origin = address.origin;
    const client = await makeClient(provider.t, {
      redirectUris: [`${origin}/auth/callback/idp`],
      siteUrl: origin,
    });
    site = await start('authjs', {
      CLIENT_ID: client.clientId,
      CLIENT_SECRET: client.clientSecret,
      PORT: address.port,
    });
  });

  it('signs the user in: the session carries their id and username', async () => {
    const browser = new UserAgent(provider.issuer);
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
    expect(arrival.body).toContain('href="/auth/signin"');

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

  it('wrote nothing on stderr', () => {
    expect(site.stderr()).toBe('');
  });
});

describe('the wallet: node wallet.ts ORDER_ID AMOUNT DESCRIPTION', () => {
  let vars: Record<string, string>;

  beforeAll(async () => {
    const buyer = await makeUser(provider.t);
    await credit(provider.t.database.db, serverContext(), { username: buyer.username, amount: 10 });
    const client = await makeClient(provider.t, { wallet: true });
    const token = await insertAccessToken(provider.t.database.db, {
      userId: buyer.id,
      clientId: client.clientId,
      scopes: ['wallet'],
    });
    vars = { IDP_ISSUER: provider.issuer, ACCESS_TOKEN: token };
  });

  it('charges once, also when the same order is sent again, and says why a charge is refused', async () => {
    const first = await runSnippet(folder, 'wallet', vars, ['1001', '1.25', 'Potion']);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const charge = JSON.parse(first.stdout);
    expect(charge).toMatchObject({ ok: true, balance: 8.75, transaction: { amount: 1.25 } });
    const again = await runSnippet(folder, 'wallet', vars, ['1001', '1.25', 'Potion']);
    expect(JSON.parse(again.stdout)).toEqual(charge);

    expect(await runSnippet(folder, 'wallet', vars, ['1002', '100', 'Castle'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'charge refused: 402 insufficient_funds\n',
    });
    expect(await runSnippet(folder, 'wallet', vars, ['1001', '2', 'Potion'])).toMatchObject({
      code: 1,
      stderr: 'charge refused: 409 idempotency_conflict\n',
    });
  });
});

describe('oauth4webapi (PAR, DPoP, logout): node oauth4webapi.ts', () => {
  let origin: string;
  let site: RunningSnippet;
  let browser: UserAgent;
  let shopper: TestUser;
  const deliverLogouts = () =>
    new BackchannelLogoutWorker(provider.t.database.db, serverContext(), {
      info: () => undefined,
      warn: () => undefined,
    }).drain();

  beforeAll(async () => {
    const address = await siteAddress();
    origin = address.origin;
    shopper = await makeUser(provider.t);
    await credit(provider.t.database.db, serverContext(), { username: shopper.username, amount: 100 });
    // The guide's registration of the secure shop, on this machine.
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
    site = await start('oauth4webapi', {
      CLIENT_ID: client.client_id,
      CLIENT_SECRET: client.client_secret,
      PORT: address.port,
      BASE_URL: origin,
      ID_TOKEN_ALG: 'ES256',
    });
  });

  it('signs in through a pushed request, with DPoP-bound tokens that read the profile', async () => {
    browser = new UserAgent(provider.issuer);
    const arrival = await browser.walk(`${origin}/login`, { user: shopper });
    expect(arrival.url.href, arrival.body.slice(0, 400)).toBe(`${origin}/`);
    // The site refuses tokens that are not DPoP-bound, and reads userinfo with them.
    expect(JSON.parse(arrival.body)).toEqual({
      signed_in: true,
      sub: String(shopper.id),
      username: shopper.username,
    });
    // The browser carried nothing of the request but its client_id and request_uri (RFC 9126 §4).
    const authorize = arrival.visited.find((visit) => visit.url.pathname === '/api/v1/oauth/authorize');
    expect([...(authorize?.url.searchParams.keys() ?? [])].sort()).toEqual(['client_id', 'request_uri']);
  });

  it('charges the wallet with DPoP, refreshes with DPoP, and reads the profile again', async () => {
    const charge = await browser.request(new URL('/buy', origin), {
      method: 'POST',
      form: { amount: '2.5', item: 'A sword', order_id: 'order-1' },
    });
    expect(charge.status).toBe(201);
    expect(await charge.json()).toMatchObject({
      ok: true,
      transaction: { type: 'charge', amount: 2.5, description: 'A sword', idempotency_key: 'order-1' },
      balance: 97.5,
    });
    const refreshed = await browser.request(new URL('/refresh', origin), { method: 'POST', form: {} });
    expect(await refreshed.json()).toEqual({ refreshed: true, token_type: 'dpop' });
    const again = await browser.request(new URL('/', origin));
    expect((await again.json()).signed_in).toBe(true);
  });

  it('signs out at the provider and comes back to the site (RP-initiated logout)', async () => {
    const arrival = await browser.walk(`${origin}/logout`);
    expect(arrival.visited.map((visit) => visit.url.pathname)).toContain('/api/v1/oauth/logout');
    // The id_token_hint named this session: no confirmation page, straight back with the state.
    expect(arrival.url.pathname).toBe('/signed-out');
    expect(JSON.parse(arrival.body)).toEqual({ signed_out: true });
    const account = await browser.request(new URL('/account', provider.issuer));
    expect(account.status).toBe(302);
    expect(account.headers.get('location')).toMatch(/^\/signin/);
    // The provider tells the site too, which answers 200 for a session it already forgot.
    expect(await deliverLogouts()).toBe(1);
    expect((await browser.request(new URL('/', origin))).status).toBe(401);
  });

  it('is signed out by a back-channel logout token when the user signs out at the provider', async () => {
    browser = new UserAgent(provider.issuer);
    const arrival = await browser.walk(`${origin}/login`, { user: shopper });
    expect(JSON.parse(arrival.body).signed_in).toBe(true);
    const page = await browser.request(new URL('/account', provider.issuer));
    const signOut = await browser.request(new URL('/signout', provider.issuer), {
      method: 'POST',
      form: hiddenFields(await page.text(), '/signout'),
    });
    expect(signOut.status).toBe(303);
    // The site still holds its session until the logout token arrives.
    expect((await browser.request(new URL('/', origin))).status).toBe(200);
    // The worker delivers the queued token to the site, which verifies it against the provider's
    // JWKS and ends the session it names.
    expect(await deliverLogouts()).toBe(1);
    expect((await browser.request(new URL('/', origin))).status).toBe(401);
  });

  it('wrote nothing on stderr', () => {
    expect(site.stderr()).toBe('');
  });
});
