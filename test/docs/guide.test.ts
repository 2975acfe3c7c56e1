import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blocksIn, guidePath, shellBlock, snippetNames, updatedGuide } from '../../scripts/snippets.js';
import { systemClock } from '../../src/lib/clock.js';
import { createRegistrationToken } from '../../src/modules/developer-apps/registration-tokens.service.js';
import { credit } from '../../src/modules/wallet/wallet.service.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../helpers/factories.js';
import { type Provider, startProvider, UserAgent } from './helpers.js';

/**
 * docs/integrating.md against the code: its snippet blocks are the files of docs/snippets/, its
 * `curl` examples work against the listening service, and the paths and error codes it names exist.
 */
const guide = readFileSync(guidePath, 'utf8');

describe('the guide’s snippet blocks', () => {
  it('are the files of docs/snippets/ (run `npx tsx scripts/snippets.ts` after changing one)', () => {
    expect(updatedGuide(guide)).toBe(guide);
  });

  it('exist for every snippet file, once each', () => {
    expect([...blocksIn(guide)].sort()).toEqual(snippetNames());
  });
});

const run = promisify(execFile);

let provider: Provider;
// A fresh embedded database takes a while to migrate on a busy machine: more than the default hook time.
beforeAll(async () => {
  provider = await startProvider();
}, 120_000);
afterAll(() => provider?.close());

describe('the guide’s curl examples, run against the service', () => {
  let client: TestClient;
  let user: TestUser;
  const origin = 'http://127.0.0.1:4000';
  const env: Record<string, string> = {};

  beforeAll(async () => {
    client = await makeClient(provider.t, { wallet: true, redirectUris: [`${origin}/callback`] });
    user = await makeUser(provider.t);
    await credit(
      provider.t.database.db,
      { config: provider.t.config, clock: provider.t.clock },
      {
        username: user.username,
        amount: 12.5,
      },
    );
    Object.assign(env, {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      IDP: provider.issuer,
      CLIENT_ID: client.clientId,
      CLIENT_SECRET: client.clientSecret,
      REDIRECT_URI: client.redirectUri,
    });
  });

  /** Runs the block with the shell variables of the guide; its output parsed as JSON. */
  async function curl(name: string, extra: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const { stdout } = await run('bash', ['-euc', shellBlock(guide, name)], { env: { ...env, ...extra } });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  /** A sign-in with PKCE up to the redirect back to the site: its code and verifier. */
  async function signIn(): Promise<{ CODE: string; CODE_VERIFIER: string }> {
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL('/api/v1/oauth/authorize', provider.issuer);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      scope: 'openid profile email offline_access wallet',
      state: randomBytes(16).toString('base64url'),
      nonce: randomBytes(16).toString('base64url'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const arrival = await new UserAgent(provider.issuer).walk(authorize, {
      user,
      stopBefore: (url) => url.origin === origin,
    });
    const code = arrival.url.searchParams.get('code');
    if (!code) throw new Error(`no code: ${arrival.url}`);
    expect(arrival.url.searchParams.get('iss')).toBe(provider.issuer);
    return { CODE: code, CODE_VERIFIER: verifier };
  }

  let tokens: Record<string, unknown>;

  it('exchanges a code with HTTP Basic, and with client_secret_post', async () => {
    tokens = await curl('token', await signIn());
    expect(tokens).toMatchObject({
      token_type: 'Bearer',
      scope: 'openid profile email wallet offline_access',
    });
    expect(tokens.access_token).toMatch(/^at_/);
    expect(tokens.refresh_token).toMatch(/^rt_/);
    expect(typeof tokens.id_token).toBe('string');
    expect(typeof tokens.expires_in).toBe('number');

    const posted = await curl('token-post', await signIn());
    expect(posted.access_token).toMatch(/^at_/);
  });

  it('reads userinfo, /me and premium status with the access token', async () => {
    const bearer = { ACCESS_TOKEN: tokens.access_token as string };
    const userinfo = await curl('userinfo', bearer);
    expect(userinfo).toMatchObject({ sub: String(user.id), id: user.id, preferred_username: user.username });
    expect(userinfo.email).toBe(`${user.username}@example.com`);
    const me = await curl('me', bearer);
    expect(me).toMatchObject({ ok: true, sub: String(user.id), user: { username: user.username } });
    const premium = await curl('premium', bearer);
    expect(premium).toMatchObject({ ok: true, active: false, days_left: 0, wallet_balance: 12.5 });
  });

  it('searches users without a token', async () => {
    const found = await curl('search');
    expect(found).toMatchObject({ ok: true, query: 'ali' });
    expect(Array.isArray(found.results)).toBe(true);
  });

  it('reads the balance, charges once per key, lists the charge', async () => {
    const bearer = { ACCESS_TOKEN: tokens.access_token as string };
    expect(await curl('wallet-balance', bearer)).toEqual({ ok: true, balance: 12.5, currency: 'COIN' });
    const first = await curl('wallet-charge', bearer);
    expect(first).toMatchObject({ ok: true, balance: 10, transaction: { amount: 2.5, type: 'charge' } });
    const retried = await curl('wallet-charge', bearer);
    expect(retried).toEqual(first);
    expect(await curl('wallet-balance', bearer)).toMatchObject({ balance: 10 });
    const history = await curl('wallet-transactions', bearer);
    expect(history).toMatchObject({ ok: true, next_cursor: null });
    expect(history.transactions).toEqual([first.transaction]);
  });

  it('refreshes, then revokes the grant, after which the token is refused', async () => {
    const refreshed = await curl('refresh', { REFRESH_TOKEN: tokens.refresh_token as string });
    expect(refreshed.access_token).toMatch(/^at_/);
    expect(refreshed.refresh_token).toMatch(/^rt_/);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    expect(await curl('revoke', { REFRESH_TOKEN: refreshed.refresh_token as string })).toEqual({ ok: true });
    const refused = await curl('userinfo', { ACCESS_TOKEN: refreshed.access_token as string });
    expect(refused).toMatchObject({ ok: false, error: 'invalid_token' });
  });

  it('registers a client with an initial access token, then reads, replaces and deletes it (RFC 7591, RFC 7592)', async () => {
    const { token } = await createRegistrationToken(
      provider.t.database.db,
      // The service runs on the real clock (helpers.ts): the token's expiry is counted on it too.
      { config: provider.t.config, clock: systemClock },
      { ownerUserId: user.id, createdBy: `user:${user.id}` },
    );
    const registered = await curl('register', { INITIAL_ACCESS_TOKEN: token });
    expect(registered).toMatchObject({
      client_id: expect.stringMatching(/^pk_/),
      client_secret: expect.stringMatching(/^sk_/),
      client_secret_expires_at: 0,
      registration_access_token: expect.stringMatching(/^rat_/),
      client_name: 'My site',
      client_uri: 'https://mysite.example',
      redirect_uris: ['https://mysite.example/callback'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const clientId = registered.client_id as string;
    expect(registered.registration_client_uri).toBe(`${provider.issuer}/api/v1/oauth/register/${clientId}`);
    const management = {
      REGISTRATION_ACCESS_TOKEN: registered.registration_access_token as string,
      REGISTRATION_CLIENT_URI: registered.registration_client_uri as string,
      CLIENT_ID: clientId,
    };
    const read = await curl('registration-read', management);
    expect(read).toMatchObject({ client_id: clientId, client_name: 'My site' });
    expect(read).not.toHaveProperty('client_secret');
    const replaced = await curl('registration-replace', management);
    expect(replaced.redirect_uris).toEqual([
      'https://mysite.example/callback',
      'https://mysite.example/callback2',
    ]);
    expect(await curl('registration-delete', management)).toEqual({ status: 204 });
    expect(await curl('registration-read', management)).toMatchObject({ ok: false, error: 'invalid_token' });
  });
});

describe('what the guide names', () => {
  it('names only paths the service serves (a site’s own paths, such as /api/auth, aside)', async () => {
    const catalogue = (await (await fetch(`${provider.issuer}/api/v1/`)).json()) as {
      routes: Array<{ path: string }>;
    };
    const served = new Set(catalogue.routes.map((route) => route.path));
    // A route with a path parameter (`/api/v1/oauth/register/:client_id`) serves each value of it.
    const patterns = catalogue.routes
      .filter((route) => route.path.includes('/:'))
      .map((route) => new RegExp(`^${route.path.replace(/:[^/]+/g, '[^/]+')}$`));
    const isServed = (name: string) => served.has(name) || patterns.some((pattern) => pattern.test(name));
    const named = new Set(
      [...guide.matchAll(/\/(?:api\/v1|api\/users|\.well-known)\/[A-Za-z0-9_\-/.]*/g)].map((match) =>
        match[0].replace(/\.+$/, ''),
      ),
    );
    expect(named.size).toBeGreaterThan(10);
    for (const name of named) expect(isServed(name), `${name} is not a route`).toBe(true);
  });

  it('names only error codes the code produces', () => {
    const source: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        const file = path.join(dir, entry);
        if (statSync(file).isDirectory()) walk(file);
        else if (file.endsWith('.ts')) source.push(readFileSync(file, 'utf8'));
      }
    };
    walk(path.resolve(import.meta.dirname, '../../src'));
    const code = source.join('\n');
    const errors = guide.slice(guide.indexOf('## Errors'), guide.indexOf('## Client libraries'));
    // The code cells of the tables: `| 400 | `invalid_grant` |` or `| `access_denied` |` (or two codes).
    const cells = [...errors.matchAll(/^\| (?:\d{3} \| )?((?:`[a-z_]+`(?:, )?)+) \|/gm)];
    const named = new Set(
      cells.flatMap((cell) => [...(cell[1] as string).matchAll(/`([a-z_]+)`/g)].map((m) => m[1])),
    );
    expect(named.size).toBeGreaterThan(15);
    for (const name of named) expect(code, `${name} is not an error code`).toMatch(new RegExp(`'${name}'`));
  });
});
