import { decodeProtectedHeader, errors as joseErrors } from 'jose';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../src/db/database.js';
import { insertSigningKey, lockSigningKeys } from '../../../src/modules/oidc/keys.repository.js';
import {
  ensureSigningKey,
  listSigningKeys,
  retireSigningKey,
  rotateSigningKey,
  SIGNER_TTL_MS,
  SigningKeyCache,
} from '../../../src/modules/oidc/keys.service.js';
import { createTestDatabase, usingPostgres } from '../../helpers/database.js';
import { ctx, getJwks, setUpOidcApp, sign, t, verify } from './oidc.fixture.js';

setUpOidcApp();

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
    expect(second.createdAt.getTime()).toBeGreaterThan(first.createdAt.getTime());
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
    expect(retired.retiredAt).toEqual(t.clock.now());
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
            privateKeyPem: 'unused',
            publicJwk: JSON.stringify({ kty: 'RSA', n: 'AQAB', e: 'AQAB' }),
            createdAt: t.clock.now(),
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
