import { createHash } from 'node:crypto';
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  type JSONWebKeySet,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import { sql } from 'kysely';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../../src/context.js';
import { openPostgres } from '../../../src/db/database.js';
import { findUserById } from '../../../src/modules/accounts/accounts.repository.js';
import { createUser } from '../../../src/modules/accounts/accounts.service.js';
import { toUser, type User } from '../../../src/modules/accounts/user.js';
import { createClient } from '../../../src/modules/clients/clients.service.js';
import { ALL_SCOPES } from '../../../src/modules/oauth/scopes.js';
import { discoveryDocument } from '../../../src/modules/oidc/discovery.js';
import { accessTokenHash, ID_TOKEN_TTL_SECONDS, signIdToken } from '../../../src/modules/oidc/id-token.js';
import { insertSigningKey, lockSigningKeys } from '../../../src/modules/oidc/keys.repository.js';
import {
  ensureSigningKey,
  listSigningKeys,
  retireSigningKey,
  rotateSigningKey,
  SIGNER_TTL_MS,
  SigningKeyCache,
} from '../../../src/modules/oidc/keys.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { createTestDatabase, usingPostgres } from '../../helpers/database.js';

let t: TestApp;
let ctx: Context;
let user: User;
let clientId: string;

beforeAll(async () => {
  t = await createTestApp();
  ctx = { config: t.config, clock: t.clock };
  const created = await createUser(t.database.db, t.clock, {
    username: 'oidc_alice',
    password: 'correct horse battery staple',
    email: 'alice@example.com',
    emailVerified: true,
    displayName: 'Alice',
    verificationLevel: 2,
  });
  const row = await findUserById(t.database.db, created.id);
  if (!row) throw new Error('the user is gone');
  user = toUser(row);
  const registered = await createClient(
    t.database.db,
    { config: t.config, clock: t.clock },
    {
      name: 'Shop',
      siteUrl: 'https://shop.example',
      redirectUris: ['https://shop.example/cb'],
    },
  );
  clientId = registered.client_id;
});
afterAll(() => t.close());

const ISSUER = 'http://localhost:3000';

async function getJwks(): Promise<JSONWebKeySet> {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/oauth/jwks' });
  expect(res.statusCode).toBe(200);
  return res.json() as JSONWebKeySet;
}

/** Verifies an id_token the way a client does: against the published JWKS, at the test clock's time. */
async function verify(idToken: string, jwks?: JSONWebKeySet) {
  return jwtVerify(idToken, createLocalJWKSet(jwks ?? (await getJwks())), {
    issuer: ISSUER,
    audience: clientId,
    algorithms: ['RS256'],
    currentDate: t.clock.now(),
  });
}

const sign = (overrides: Partial<Parameters<typeof signIdToken>[2]> = {}) =>
  signIdToken(t.database.db, ctx, {
    user,
    clientId,
    scopes: ['openid', 'profile', 'email', 'verified'],
    nonce: null,
    authTime: t.clock.now(),
    ...overrides,
  });

describe('GET /.well-known/openid-configuration', () => {
  it('publishes the provider metadata under PUBLIC_URL, issuer exactly PUBLIC_URL', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    const body = res.json();
    expect(body).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/api/v1/oauth/authorize`,
      token_endpoint: `${ISSUER}/api/v1/oauth/token`,
      userinfo_endpoint: `${ISSUER}/api/v1/oauth/userinfo`,
      jwks_uri: `${ISSUER}/api/v1/oauth/jwks`,
      revocation_endpoint: `${ISSUER}/api/v1/oauth/revoke`,
      introspection_endpoint: `${ISSUER}/api/v1/oauth/introspect`,
      scopes_supported: ['openid', 'profile', 'email', 'verified', 'wallet', 'offline_access'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256'],
      prompt_values_supported: ['none', 'login', 'consent'],
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      claims_parameter_supported: false,
    });
    expect(body.scopes_supported).toEqual(ALL_SCOPES);
    for (const claim of [
      'sub',
      'id',
      'iss',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      'at_hash',
      'name',
      'nickname',
      'preferred_username',
      'username',
      'display_name',
      'picture',
      'avatar_url',
      'game',
      'game_name',
      'game_linked',
      'tag',
      'email',
      'email_verified',
      'verified',
      'verification_level',
      'verification_tier',
      'verified_badge',
    ]) {
      expect(body.claims_supported).toContain(claim);
    }
    expect(new Set(body.claims_supported).size).toBe(body.claims_supported.length);
  });

  it('keeps a path prefix of PUBLIC_URL in the issuer and every endpoint', () => {
    const document = discoveryDocument('https://example.com/idp');
    expect(document.issuer).toBe('https://example.com/idp');
    expect(document.jwks_uri).toBe('https://example.com/idp/api/v1/oauth/jwks');
    expect(document.token_endpoint).toBe('https://example.com/idp/api/v1/oauth/token');
  });

  it('is accepted by openid-client discovery unchanged', async () => {
    const injectFetch = async (url: string, options: client.CustomFetchOptions) => {
      const target = new URL(url);
      expect(target.origin).toBe(ISSUER);
      const res = await t.app.inject({
        method: options.method as 'GET',
        url: `${target.pathname}${target.search}`,
        headers: options.headers,
      });
      return new Response(res.body, {
        status: res.statusCode,
        headers: Object.entries(res.headers).map(([name, value]) => [name, String(value)]),
      });
    };
    const config = await client.discovery(new URL(ISSUER), clientId, 'sk_secret', undefined, {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: injectFetch,
    });
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(ISSUER);
    expect(metadata.supportsPKCE()).toBe(true);
    expect(metadata.jwks_uri).toBe(`${ISSUER}/api/v1/oauth/jwks`);
  });

  it('refuses other methods with 405', async () => {
    expectApiError(
      await t.app.inject({ method: 'POST', url: '/.well-known/openid-configuration' }),
      405,
      'method_not_allowed',
    );
  });
});

describe('GET /api/v1/oauth/jwks', () => {
  it('creates the first key on demand and publishes only public RS256 signing keys', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/oauth/jwks' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    const { keys } = res.json() as { keys: Array<Record<string, unknown>> };
    expect(keys).toHaveLength(1);
    expect(keys[0]).toEqual({
      kty: 'RSA',
      n: expect.stringMatching(/^[A-Za-z0-9_-]{340,}$/),
      e: 'AQAB',
      kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      alg: 'RS256',
      use: 'sig',
    });
    // The same key on every request: nothing generated twice.
    expect((await getJwks()).keys).toEqual(keys);
    expect(await t.database.db.selectFrom('signing_keys').select('kid').execute()).toHaveLength(1);
  });

  it('stores the private key as PKCS8 and the public JWK as jsonb', async () => {
    const row = await t.database.db.selectFrom('signing_keys').selectAll().executeTakeFirstOrThrow();
    expect(row.algorithm).toBe('RS256');
    expect(row.private_key_pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(row.public_jwk).toMatchObject({ kty: 'RSA', kid: row.kid, e: 'AQAB' });
    expect(row.public_jwk).not.toHaveProperty('d');
    expect(row.retired_at).toBeNull();
  });
});

describe('id_token', () => {
  it('verifies against the JWKS and carries the protocol claims', async () => {
    t.clock.set('2026-06-01T12:00:00Z');
    const authTime = new Date('2026-06-01T11:58:20.750Z');
    const accessToken = 'at_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';
    const idToken = await sign({ nonce: 'n-0S6_WzA2Mj', authTime, accessToken });
    const { payload, protectedHeader } = await verify(idToken);
    const { keys } = await getJwks();
    expect(protectedHeader).toEqual({ alg: 'RS256', kid: keys[0]?.kid, typ: 'JWT' });
    const iat = Date.parse('2026-06-01T12:00:00Z') / 1000;
    expect(payload).toMatchObject({
      iss: ISSUER,
      sub: String(user.id),
      aud: clientId,
      iat,
      exp: iat + ID_TOKEN_TTL_SECONDS,
      auth_time: Math.floor(authTime.getTime() / 1000),
      nonce: 'n-0S6_WzA2Mj',
    });
    expect(ID_TOKEN_TTL_SECONDS).toBe(3600);
    // OIDC Core §3.1.3.6: base64url of the left half of SHA-256 over the ASCII token.
    const digest = createHash('sha256').update(accessToken).digest();
    expect(payload.at_hash).toBe(digest.subarray(0, 16).toString('base64url'));
    expect(payload.at_hash).toBe(accessTokenHash(accessToken));
    expect(payload.at_hash).toHaveLength(22);
  });

  it('leaves out nonce and at_hash when there are none', async () => {
    const { payload } = await verify(await sign());
    expect(payload).not.toHaveProperty('nonce');
    expect(payload).not.toHaveProperty('at_hash');
  });

  it('carries the profile claims of the granted scopes only', async () => {
    const all = (await verify(await sign())).payload;
    expect(all).toMatchObject({
      sub: String(user.id),
      id: user.id,
      preferred_username: 'oidc_alice',
      email: 'alice@example.com',
      email_verified: true,
      verification_level: 2,
    });
    const withoutEmail = (await verify(await sign({ scopes: ['openid', 'profile', 'verified'] }))).payload;
    expect(withoutEmail).not.toHaveProperty('email');
    expect(withoutEmail).not.toHaveProperty('email_verified');
    expect(withoutEmail).toMatchObject({ preferred_username: 'oidc_alice', verification_level: 2 });
    const openidOnly = (await verify(await sign({ scopes: ['openid'] }))).payload;
    expect(Object.keys(openidOnly).sort()).toEqual(['aud', 'auth_time', 'exp', 'iat', 'id', 'iss', 'sub']);
  });

  it('is refused once expired, and for another audience or issuer', async () => {
    const idToken = await sign();
    const jwks = createLocalJWKSet(await getJwks());
    const later = new Date(t.clock.now().getTime() + (ID_TOKEN_TTL_SECONDS + 1) * 1000);
    await expect(jwtVerify(idToken, jwks, { currentDate: later })).rejects.toBeInstanceOf(
      joseErrors.JWTExpired,
    );
    await expect(
      jwtVerify(idToken, jwks, { audience: 'pk_other', currentDate: t.clock.now() }),
    ).rejects.toBeInstanceOf(joseErrors.JWTClaimValidationFailed);
    await expect(
      jwtVerify(idToken, jwks, { issuer: `${ISSUER}/`, currentDate: t.clock.now() }),
    ).rejects.toBeInstanceOf(joseErrors.JWTClaimValidationFailed);
  });

  it('can be signed inside a transaction, with the key read in it', async () => {
    const idToken = await t.database.db
      .transaction()
      .execute((trx) =>
        signIdToken(trx, ctx, { user, clientId, scopes: ['openid'], nonce: 'n', authTime: t.clock.now() }),
      );
    const { payload } = await verify(idToken);
    expect(payload.nonce).toBe('n');
  });

  it('signs without re-reading the key table each time (the signer is cached)', async () => {
    await sign();
    const started = performance.now();
    const rounds = 50;
    for (let i = 0; i < rounds; i++) await sign();
    const perToken = (performance.now() - started) / rounds;
    // RS256 signs in well under a millisecond here; 25 ms would mean a query and a key import each time.
    expect(perToken).toBeLessThan(25);
  });
});

describe('key rotation', () => {
  it('signs with the new key at once; tokens of the old key keep verifying', async () => {
    const before = await sign();
    const oldKid = decodeProtectedHeader(before).kid as string;

    const rotated = await rotateSigningKey(t.database.db, ctx);
    expect(rotated.kid).not.toBe(oldKid);
    const after = await sign();
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);

    const jwks = await getJwks();
    expect(jwks.keys.map((key) => key.kid)).toEqual([rotated.kid, oldKid]);
    await verify(before, jwks);
    await verify(after, jwks);

    const keys = await listSigningKeys(t.database.db);
    expect(keys.map((key) => [key.kid, key.signing])).toEqual([
      [rotated.kid, true],
      [oldKid, false],
    ]);
  });

  it('orders a key rotated at the same instant after the previous one', async () => {
    // The test clock stands still: two rotations share a timestamp, and the second must still sign.
    const first = await rotateSigningKey(t.database.db, ctx);
    const second = await rotateSigningKey(t.database.db, ctx);
    expect(second.created_at.getTime()).toBeGreaterThan(first.created_at.getTime());
    expect(decodeProtectedHeader(await sign()).kid).toBe(second.kid);
  });

  it('retires a key: no longer published, its tokens stop verifying; the signer cannot be retired', async () => {
    const oldToken = await sign();
    const oldKid = decodeProtectedHeader(oldToken).kid as string;
    const current = await rotateSigningKey(t.database.db, ctx);

    await expect(retireSigningKey(t.database.db, ctx, current.kid)).rejects.toMatchObject({
      error: 'invalid_request',
    });
    await expect(retireSigningKey(t.database.db, ctx, 'no-such-kid')).rejects.toMatchObject({
      error: 'not_found',
    });

    const retired = await retireSigningKey(t.database.db, ctx, oldKid);
    expect(retired.retired_at).toEqual(t.clock.now());
    // Retiring twice changes nothing.
    expect(await retireSigningKey(t.database.db, ctx, oldKid)).toEqual(retired);

    const jwks = await getJwks();
    expect(jwks.keys.map((key) => key.kid)).not.toContain(oldKid);
    expect(jwks.keys[0]?.kid).toBe(current.kid);
    await expect(verify(oldToken, jwks)).rejects.toBeInstanceOf(joseErrors.JWKSNoMatchingKey);
    await verify(await sign(), jwks);
  });

  it('another instance picks up a rotation after its cache TTL', async () => {
    let now = 0;
    const otherInstance = new SigningKeyCache(t.database.db, ctx, { monotonicNow: () => now });
    const before = await otherInstance.signer();
    const rotated = await rotateSigningKey(t.database.db, ctx);
    // Within the TTL the other instance still signs with the previous key, which still verifies.
    now += SIGNER_TTL_MS - 1;
    expect((await otherInstance.signer()).kid).toBe(before.kid);
    expect((await getJwks()).keys.map((key) => key.kid)).toContain(before.kid);
    now += 2;
    expect((await otherInstance.signer()).kid).toBe(rotated.kid);
  });
});

describe('ensureSigningKey', () => {
  it('leaves exactly one key when instances start at once on an empty table', async () => {
    const database = await createTestDatabase();
    // On PostgreSQL, separate connection pools: separate instances. PGlite is one process's database.
    const other = usingPostgres && database.url ? openPostgres({ url: database.url, poolMax: 2 }) : undefined;
    try {
      const dbs = [database.db, other?.db ?? database.db, database.db, other?.db ?? database.db];
      const results = await Promise.all(dbs.map((db) => ensureSigningKey(db, ctx)));
      const rows = await database.db.selectFrom('signing_keys').select('kid').execute();
      expect(rows).toHaveLength(1);
      for (const result of results) expect(result.kid).toBe(rows[0]?.kid);
      // Later calls find it and create nothing.
      expect((await ensureSigningKey(database.db, ctx)).kid).toBe(rows[0]?.kid);
      expect(await database.db.selectFrom('signing_keys').select('kid').execute()).toHaveLength(1);
    } finally {
      await other?.close();
      await database.drop();
    }
  });

  it.skipIf(!usingPostgres)(
    'waits for an instance that is inserting the first key, then uses that key',
    async () => {
      const database = await createTestDatabase();
      const other = openPostgres({ url: database.url as string, poolMax: 2 });
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      try {
        // Instance A holds the table lock while it inserts the first key...
        const instanceA = database.db.transaction().execute(async (trx) => {
          await lockSigningKeys(trx);
          await held;
          return insertSigningKey(trx, {
            kid: 'instance-a-key',
            algorithm: 'RS256',
            private_key_pem: 'unused',
            public_jwk: JSON.stringify({ kty: 'RSA', n: 'AQAB', e: 'AQAB' }),
            created_at: t.clock.now(),
          });
        });
        // ...while instance B finds no key, generates one and must wait for the lock.
        let settled = false;
        const instanceB = ensureSigningKey(other.db, ctx).finally(() => {
          settled = true;
        });
        for (let waited = 0; !settled && waited < 10_000; waited += 20) {
          const { rows } = await sql<{ waiting: number }>`
            select count(*)::int as waiting from pg_locks where not granted and relation = 'signing_keys'::regclass
          `.execute(database.db);
          if (rows[0]?.waiting === 1) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        release();
        await instanceA;
        expect((await instanceB).kid).toBe('instance-a-key');
        expect(await database.db.selectFrom('signing_keys').select('kid').execute()).toEqual([
          { kid: 'instance-a-key' },
        ]);
      } finally {
        release();
        await other.close();
        await database.drop();
      }
    },
  );
});
