import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenForChanges } from '../../../src/db/change-feed.js';
import { hashSecret } from '../../../src/lib/secrets.js';
import { disableUser, updateUserProfile } from '../../../src/modules/accounts/accounts.service.js';
import { addClientSecret, expireClientSecret } from '../../../src/modules/clients/client-secret.service.js';
import { rotateClientSecret } from '../../../src/modules/clients/clients.service.js';
import { ClientCache } from '../../../src/modules/oauth/client-cache.js';
import { AccessTokenCache } from '../../../src/modules/oidc/token-cache.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { makeClient, makeUser, mintCode, type TestClient } from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';
import { insertAccessToken } from '../../helpers/tokens.js';

/**
 * Two instances of the service on one database, each with its own in-process token cache fed by
 * the database's announcements: whatever ends a token on one (or in the database directly) is
 * refused by the other within a second.
 */
let database: TestDatabase;
let a: TestApp;
let b: TestApp;
let cacheB: AccessTokenCache;
let clientCacheB: ClientCache;
const stops: Array<() => Promise<void>> = [];
let client: TestClient;

beforeAll(async () => {
  database = await createTestDatabase();
  const instance = async () => {
    const tokenCache = new AccessTokenCache({ maxAgeMs: 60_000, maxEntries: 1000 });
    const clientCache = new ClientCache({ maxAgeMs: 60_000, maxEntries: 1000 });
    stops.push(await listenForChanges(database.listen, [tokenCache, clientCache]));
    return { tokenCache, clientCache };
  };
  const first = await instance();
  const second = await instance();
  cacheB = second.tokenCache;
  clientCacheB = second.clientCache;
  a = await createTestApp({ database, ...first });
  b = await createTestApp({ database, ...second });
  client = await makeClient(a);
});

afterAll(async () => {
  await a.app.close();
  await b.app.close();
  for (const stop of stops) await stop();
  await database.drop();
});

async function freshToken(username?: string) {
  const user = await makeUser(a, username ? { username } : {});
  const tokens = (await exchangeCode(a.app, client, await mintCode(a, client, user))).json();
  return { user, token: tokens.access_token as string };
}

const userinfoOn = (t: TestApp, token: string) =>
  t.app.inject({
    method: 'GET',
    url: '/api/v1/oauth/userinfo',
    headers: { authorization: `Bearer ${token}` },
  });

/** Warms B's cache with the token and checks it is really served from there. */
async function cachedOnB(token: string): Promise<void> {
  expect((await userinfoOn(b, token)).statusCode).toBe(200);
  expect(cacheB.get(hashSecret(token), b.clock.now().getTime())).toBeDefined();
  expect((await userinfoOn(b, token)).statusCode).toBe(200);
}

const refusedOnB = (token: string) =>
  expect.poll(async () => (await userinfoOn(b, token)).statusCode, { timeout: 1000, interval: 20 }).toBe(401);

describe('the in-process token cache across two instances', () => {
  it('refuses on one instance a token revoked on the other', async () => {
    const { token } = await freshToken();
    await cachedOnB(token);
    const revoked = await postForm(
      a.app,
      '/api/v1/oauth/revoke',
      { token },
      { authorization: basic(client) },
    );
    expect(revoked.statusCode).toBe(200);
    await refusedOnB(token);
  });

  it('refuses the tokens of a user disabled elsewhere', async () => {
    const { user, token } = await freshToken();
    await cachedOnB(token);
    await disableUser(database.db, { config: a.config, clock: a.clock }, { username: user.username });
    await refusedOnB(token);
  });

  it('shows a profile change at once', async () => {
    const { user, token } = await freshToken();
    await cachedOnB(token);
    await updateUserProfile(
      database.db,
      { config: a.config, clock: a.clock },
      { username: user.username, displayName: 'Renamed Person' },
    );
    await expect
      .poll(async () => (await userinfoOn(b, token)).json().name, { timeout: 1000, interval: 20 })
      .toBe('Renamed Person');
  });

  it('refuses the tokens of a client disabled elsewhere, and a grant revoked by plain SQL', async () => {
    const other = await makeClient(a);
    const user = await makeUser(a);
    const token = (await exchangeCode(a.app, other, await mintCode(a, other, user))).json().access_token;
    await cachedOnB(token);
    await sql`update clients set disabled_at = now() where client_id = ${other.clientId}`.execute(
      database.db,
    );
    await refusedOnB(token);

    const second = await freshToken();
    await cachedOnB(second.token);
    await sql`update grants set revoked_at = now() where user_id = ${second.user.id}`.execute(database.db);
    await refusedOnB(second.token);
  });

  it('refuses an expired token at once, cached or not', async () => {
    // A token 30 s from its end: it expires well within the cache's 60 s, so only the cache's own
    // check of the token's expiry can refuse it.
    const user = await makeUser(a);
    const token = await insertAccessToken(database.db, {
      userId: user.id,
      clientId: client.clientId,
      scopes: ['openid', 'profile'],
      clock: b.clock,
      expiresAt: new Date(b.clock.now().getTime() + 30_000),
    });
    await cachedOnB(token);
    b.clock.advance(31_000);
    expect(cacheB.get(hashSecret(token), b.clock.now().getTime() - 31_000)).toBeDefined();
    expect((await userinfoOn(b, token)).statusCode).toBe(401);
  });

  it('refuses an old client secret and a disabled client at once on the other instance', async () => {
    b.clock.set(a.clock.now()); // an earlier test moved B's clock past the tokens' lifetime
    const site = await makeClient(a);
    const user = await makeUser(a);
    const exchangeOnB = async (as: TestClient) =>
      (await exchangeCode(b.app, as, await mintCode(a, site, user))).statusCode;
    expect(await exchangeOnB(site)).toBe(200);
    expect(clientCacheB.get(site.clientId, b.clock.now().getTime())).toBeDefined();

    const rotated = await rotateClientSecret(
      database.db,
      { config: a.config, clock: a.clock },
      site.clientId,
    );
    await expect.poll(() => exchangeOnB(site), { timeout: 1000, interval: 20 }).toBe(401);
    const renewed = { ...site, clientSecret: rotated.client_secret };
    expect(await exchangeOnB(renewed)).toBe(200);

    await sql`update clients set disabled_at = now() where client_id = ${site.clientId}`.execute(database.db);
    await expect.poll(() => exchangeOnB(renewed), { timeout: 1000, interval: 20 }).toBe(401);
  });

  it('accepts a secret added on one instance at once on the other, and refuses it once expired there', async () => {
    b.clock.set(a.clock.now());
    const site = await makeClient(a);
    const user = await makeUser(a);
    const exchangeOnB = async (as: TestClient) =>
      (await exchangeCode(b.app, as, await mintCode(a, site, user))).statusCode;
    expect(await exchangeOnB(site)).toBe(200);
    expect(clientCacheB.get(site.clientId, b.clock.now().getTime())).toBeDefined();

    const ctxA = { config: a.config, clock: a.clock };
    const added = await addClientSecret(database.db, ctxA, site.clientId);
    const second = { ...site, clientSecret: added.client_secret };
    await expect.poll(() => exchangeOnB(second), { timeout: 1000, interval: 20 }).toBe(200);
    expect(clientCacheB.get(site.clientId, b.clock.now().getTime())).toBeDefined();

    await expireClientSecret(database.db, ctxA, site.clientId, added.id, { at: a.clock.now() });
    await expect.poll(() => exchangeOnB(second), { timeout: 1000, interval: 20 }).toBe(401);
    expect(await exchangeOnB(site)).toBe(200);
  });
});
