import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields } from '../helpers/browser.js';
import {
  childEnv,
  type RunningServer,
  runIdp,
  startServer,
  stopAllChildren,
  succeeded,
} from '../helpers/cli.js';
import { CookieJar } from '../helpers/cookie-jar.js';
import { createEmptyPostgresDatabase, testRedisUrl, usingPostgres } from '../helpers/database.js';
import { freePort } from '../helpers/tcp-proxy.js';

/*
 * Several instances behind a load balancer: two real server processes on one PostgreSQL and one
 * Redis behave as one service. A token revoked on one is refused by the other within a second
 * (its cache hears the database's announcement), a session made on one works on the other,
 * id_tokens from either verify against either's JWKS, and rate limits are counted together.
 * PostgreSQL only: the embedded database belongs to one process.
 */

const TIMEOUT = 120_000;
let drop: (() => Promise<void>) | undefined;
let a: RunningServer;
let b: RunningServer;
let env: Record<string, string>;
let redirectUri: string;
let site: { client_id: string; client_secret: string };
let app: { client_id: string };

/** Both are needed: TEST_DATABASE_URL and TEST_REDIS_URL. */
const withoutServers = !usingPostgres || testRedisUrl === undefined;

describe.skipIf(withoutServers)('two instances on one PostgreSQL and one Redis', () => {
  beforeAll(async () => {
    const database = await createEmptyPostgresDatabase();
    drop = database.drop;
    const [portA, portB] = [await freePort(), await freePort()];
    env = childEnv({
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl as string,
      // Counters of their own: the database's users are numbered from 1 in every test run.
      REDIS_KEY_PREFIX: `idp-test-${randomUUID()}:`,
      // The address of the load balancer in front of both: one issuer.
      PUBLIC_URL: `http://127.0.0.1:${portA}`,
      COOKIE_SECRET: 'a shared cookie secret of the two instances, long enough',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      RATE_LIMIT_BEARER_PER_MIN: '1000',
    });
    succeeded(await runIdp(['migrate', '--json'], { env }));
    [a, b] = await Promise.all([
      startServer({ env: { ...env, PORT: String(portA) } }),
      startServer({ env: { ...env, PORT: String(portB) } }),
    ]);
    redirectUri = 'https://site.example/callback';
    site = succeeded(
      await runIdp(
        [
          'clients',
          'create',
          '--name',
          'Site',
          '--site-url',
          'https://site.example',
          '--redirect-uri',
          redirectUri,
          '--json',
        ],
        { env },
      ),
    ) as typeof site;
    app = succeeded(
      await runIdp(
        [
          'clients',
          'create',
          '--name',
          'App',
          '--site-url',
          'https://id.example',
          '--redirect-uri',
          'https://id.example/app',
          '--official-mobile',
          '--json',
        ],
        { env },
      ),
    ) as typeof app;
    succeeded(
      await runIdp(
        ['users', 'create', '--username', 'twin', '--password', 'a long enough password', '--json'],
        { env },
      ),
    );
  }, TIMEOUT);

  afterAll(async () => {
    await stopAllChildren();
    await drop?.();
  });

  /** A mobile sign-in on `server`: an access token of a device. */
  async function mobileToken(server: RunningServer): Promise<{ accessToken: string; deviceId: string }> {
    const keys = generateKeyPairSync('ed25519');
    const deviceId = `device-${Math.random().toString(36).slice(2, 12)}`;
    const post = (path: string, body: object, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const { challenge } = (await (
      await post('/api/v1/mobile/challenge', { client_id: app.client_id, device_id: deviceId })
    ).json()) as {
      challenge: string;
    };
    const res = await post('/api/v1/mobile/verify', {
      client_id: app.client_id,
      device_id: deviceId,
      challenge,
      signature: sign(null, Buffer.from(`${challenge}.${deviceId}`), keys.privateKey).toString('base64url'),
      public_key: keys.publicKey.export({ format: 'jwk' }).x,
      username: 'twin',
      password: 'a long enough password',
    });
    expect(res.status).toBe(200);
    return { accessToken: ((await res.json()) as { access_token: string }).access_token, deviceId };
  }

  const me = (server: RunningServer, token: string) =>
    fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });

  it('a token revoked on one instance is refused by the other within a second', {
    timeout: TIMEOUT,
  }, async () => {
    const { accessToken, deviceId } = await mobileToken(a);
    // Both instances have served it, so both hold it in their caches.
    expect((await me(a, accessToken)).status).toBe(200);
    expect((await me(b, accessToken)).status).toBe(200);
    const logout = await fetch(`${a.url}/api/v1/mobile/logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ client_id: app.client_id, device_id: deviceId }),
    });
    expect(logout.status).toBe(200);
    const revokedAt = performance.now();
    let status = 200;
    while (status === 200 && performance.now() - revokedAt < 5000) {
      status = (await me(b, accessToken)).status;
    }
    expect(status).toBe(401);
    expect(performance.now() - revokedAt).toBeLessThan(1000);
  });

  it('a session made on one instance works on the other', { timeout: TIMEOUT }, async () => {
    const jar = new CookieJar();
    const page = jar.keep(await fetch(`${a.url}/signin`, { headers: jar.header() }));
    const form = new URLSearchParams({
      ...hiddenFields(await page.text(), '/signin'),
      username: 'twin',
      password: 'a long enough password',
    });
    const signedIn = jar.keep(
      await fetch(`${a.url}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: { ...jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      }),
    );
    expect(signedIn.status).toBe(303);
    const account = await fetch(`${b.url}/account`, { headers: jar.header(), redirect: 'manual' });
    expect(account.status).toBe(200);
    expect(await account.text()).toContain('@twin');
  });

  it('an id_token from either instance verifies against the JWKS of either', {
    timeout: TIMEOUT,
  }, async () => {
    const jar = new CookieJar();
    const page = jar.keep(await fetch(`${b.url}/signin`));
    const signedIn = jar.keep(
      await fetch(`${b.url}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: { ...jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          ...hiddenFields(await page.text(), '/signin'),
          username: 'twin',
          password: 'a long enough password',
        }).toString(),
      }),
    );
    expect(signedIn.status).toBe(303);

    for (const [first, second] of [
      [a, b],
      [b, a],
    ] as const) {
      const authorize = new URL(`${first.url}/api/v1/oauth/authorize`);
      for (const [name, value] of Object.entries({
        response_type: 'code',
        client_id: site.client_id,
        redirect_uri: redirectUri,
        scope: 'openid profile',
        state: 'st',
        nonce: 'nonce-1',
      })) {
        authorize.searchParams.set(name, value);
      }
      let res = jar.keep(await fetch(authorize, { headers: jar.header(), redirect: 'manual' }));
      if (res.status === 200) {
        // The consent page (the first time); the decision goes to the other instance.
        const fields = hiddenFields(await res.text(), '/api/v1/oauth/authorize/decision');
        res = jar.keep(
          await fetch(`${second.url}/api/v1/oauth/authorize/decision`, {
            method: 'POST',
            redirect: 'manual',
            headers: { ...jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ ...fields, decision: 'allow' }).toString(),
          }),
        );
      }
      expect([302, 303]).toContain(res.status);
      const code = new URL(res.headers.get('location') ?? '').searchParams.get('code');
      expect(code).toMatch(/^ac_/);
      const token = await fetch(`${second.url}/api/v1/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: code ?? '',
          redirect_uri: redirectUri,
        }).toString(),
      });
      expect(token.status).toBe(200);
      const { id_token } = (await token.json()) as { id_token: string };
      for (const server of [a, b]) {
        const jwks = createRemoteJWKSet(new URL(`${server.url}/api/v1/oauth/jwks`));
        const { payload } = await jwtVerify(id_token, jwks, {
          issuer: env.PUBLIC_URL,
          audience: site.client_id,
        });
        expect(payload.nonce).toBe('nonce-1');
      }
    }
  });

  it('count rate limits together through Redis', { timeout: TIMEOUT }, async () => {
    const limited = { ...env, RATE_LIMIT_BEARER_PER_MIN: '4' };
    const [c, d] = await Promise.all([
      startServer({ env: { ...limited, PORT: String(await freePort()) } }),
      startServer({ env: { ...limited, PORT: String(await freePort()) } }),
    ]);
    try {
      const { accessToken } = await mobileToken(c);
      const statuses = [];
      for (const server of [c, d, c, d, c]) statuses.push((await me(server, accessToken)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      expect((await me(d, accessToken)).status).toBe(429);
    } finally {
      await Promise.all([c.stop(), d.stop()]);
    }
  });
});
