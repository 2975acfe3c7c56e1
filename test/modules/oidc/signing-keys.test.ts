import { createHash } from 'node:crypto';
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWK,
  errors as joseErrors,
} from 'jose';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../src/db/database.js';
import { signIdToken } from '../../../src/modules/oidc/id-token.js';
import { insertSigningKey, lockSigningKeys } from '../../../src/modules/oidc/keys.repository.js';
import {
  currentSigner,
  ensureSigningKey,
  ensureSigningKeys,
  listSigningKeys,
  retireSigningKey,
  rotateSigningKey,
  SIGNER_TTL_MS,
  SigningKeyCache,
} from '../../../src/modules/oidc/keys.service.js';
import { createTestDatabase, usingPostgres } from '../../helpers/database.js';
import { clientId, ctx, getJwks, setUpOidcApp, sign, t, user, verify } from './oidc.fixture.js';

setUpOidcApp();

const KID = /^[A-Za-z0-9_-]{43}$/;
/** The kids of one algorithm's keys in the JWKS, in its order. */
const kidsOf = (jwks: JSONWebKeySet, alg: string) =>
  jwks.keys.filter((key) => key.alg === alg).map((key) => key.kid);

describe('GET /api/v1/oauth/jwks', () => {
  it('creates a key of each algorithm on demand and publishes only their public members', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/oauth/jwks' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    const { keys } = res.json() as { keys: Array<Record<string, unknown>> };
    // RS256 first: a client that takes the first key, from before ES256 and EdDSA, still finds RS256.
    expect(keys).toEqual([
      {
        kty: 'RSA',
        n: expect.stringMatching(/^[A-Za-z0-9_-]{342}$/),
        e: 'AQAB',
        kid: expect.stringMatching(KID),
        alg: 'RS256',
        use: 'sig',
      },
      {
        kty: 'EC',
        crv: 'P-256',
        x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        y: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        kid: expect.stringMatching(KID),
        alg: 'ES256',
        use: 'sig',
      },
      {
        kty: 'OKP',
        crv: 'Ed25519',
        x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        kid: expect.stringMatching(KID),
        alg: 'EdDSA',
        use: 'sig',
      },
    ]);
    // The kid is the RFC 7638 thumbprint of the public key.
    for (const key of keys) expect(await calculateJwkThumbprint(key as JWK)).toBe(key.kid);
    // The same keys on every request: nothing generated twice.
    expect((await getJwks()).keys).toEqual(keys);
    expect(await t.database.db.selectFrom('signing_keys').select('kid').execute()).toHaveLength(3);
  });

  it('stores each private key as PKCS8 and its public JWK as jsonb', async () => {
    const rows = await t.database.db.selectFrom('signing_keys').selectAll().orderBy('algorithm').execute();
    expect(rows.map((row) => [row.algorithm, row.public_jwk.kty])).toEqual([
      ['ES256', 'EC'],
      ['EdDSA', 'OKP'],
      ['RS256', 'RSA'],
    ]);
    for (const row of rows) {
      expect(row.private_key_pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
      expect(row.public_jwk).toMatchObject({ kid: row.kid, alg: row.algorithm, use: 'sig' });
      expect(row.public_jwk).not.toHaveProperty('d');
      expect(row.retired_at).toBeNull();
    }
  });

  it('refuses a key of another algorithm in the table (migrations/0022)', async () => {
    const insert = insertSigningKey(t.database.db, {
      kid: 'hs256-key',
      algorithm: 'HS256' as 'RS256',
      privateKeyPem: 'unused',
      publicJwk: '{}',
      createdAt: t.clock.now(),
    });
    await expect(insert).rejects.toMatchObject({ code: '23514' });
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
    expect(kidsOf(jwks, 'RS256')).toEqual([rotated.kid, oldKid]);
    await verify(before, jwks);
    await verify(after, jwks);

    const keys = (await listSigningKeys(t.database.db)).filter((key) => key.algorithm === 'RS256');
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
    expect(kidsOf(jwks, 'RS256')[0]).toBe(current.kid);
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

describe('ensureSigningKeys', () => {
  it('leaves exactly one key per algorithm when instances start at once on an empty table', async () => {
    const database = await createTestDatabase();
    // On PostgreSQL, separate connection pools: separate instances. PGlite is one process's database.
    const other = usingPostgres && database.url ? openPostgres({ url: database.url, poolMax: 2 }) : undefined;
    try {
      const dbs = [database.db, other?.db ?? database.db, database.db, other?.db ?? database.db];
      const results = await Promise.all(dbs.map((db) => ensureSigningKeys(db, ctx)));
      const rows = await database.db
        .selectFrom('signing_keys')
        .select(['kid', 'algorithm'])
        .orderBy('algorithm')
        .execute();
      expect(rows.map((row) => row.algorithm)).toEqual(['ES256', 'EdDSA', 'RS256']);
      for (const result of results) {
        for (const row of rows) expect(result.get(row.algorithm)?.kid).toBe(row.kid);
      }
      // Later calls find them and create nothing.
      expect((await ensureSigningKey(database.db, ctx, 'ES256')).kid).toBe(rows[0]?.kid);
      expect(await database.db.selectFrom('signing_keys').select('kid').execute()).toHaveLength(3);
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

describe('keys per algorithm', () => {
  it('rotates one algorithm alone: its new key signs at once, the others keep theirs', async () => {
    const before = {
      RS256: await sign(),
      ES256: await sign({ alg: 'ES256' }),
      EdDSA: await sign({ alg: 'EdDSA' }),
    };
    const kidOf = (token: string) => decodeProtectedHeader(token).kid;

    const rotated = await rotateSigningKey(t.database.db, ctx, 'ES256');
    expect(rotated.algorithm).toBe('ES256');
    const es256 = await sign({ alg: 'ES256' });
    expect(decodeProtectedHeader(es256)).toEqual({ alg: 'ES256', kid: rotated.kid, typ: 'JWT' });
    expect(kidOf(await sign())).toBe(kidOf(before.RS256));
    expect(kidOf(await sign({ alg: 'EdDSA' }))).toBe(kidOf(before.EdDSA));

    const jwks = await getJwks();
    expect(kidsOf(jwks, 'ES256')).toEqual([rotated.kid, kidOf(before.ES256)]);
    await verify(before.ES256, jwks, 'ES256');
    await verify(es256, jwks, 'ES256');
    await verify(before.EdDSA, jwks, 'EdDSA');
    // A client registered for one algorithm refuses a token of another (OIDC Core §3.1.3.7 step 7).
    await expect(verify(es256, jwks, 'RS256')).rejects.toBeInstanceOf(joseErrors.JOSEAlgNotAllowed);

    const signing = (await listSigningKeys(t.database.db)).filter((key) => key.signing);
    expect(signing.map((key) => [key.algorithm, key.kid]).sort()).toEqual(
      [
        ['ES256', rotated.kid],
        ['EdDSA', kidOf(before.EdDSA)],
        ['RS256', kidOf(before.RS256)],
      ].sort(),
    );
  });

  it('retires a key of any algorithm; the key signing with its algorithm cannot be retired', async () => {
    const oldEd = decodeProtectedHeader(await sign({ alg: 'EdDSA' })).kid as string;
    await expect(retireSigningKey(t.database.db, ctx, oldEd)).rejects.toMatchObject({
      error: 'invalid_request',
      description: expect.stringContaining('idp keys rotate --alg EdDSA'),
    });
    const newEd = await rotateSigningKey(t.database.db, ctx, 'EdDSA');
    const retired = await retireSigningKey(t.database.db, ctx, oldEd);
    expect(retired).toMatchObject({ kid: oldEd, algorithm: 'EdDSA', retiredAt: t.clock.now() });
    const jwks = await getJwks();
    expect(kidsOf(jwks, 'EdDSA')).toEqual([newEd.kid]);
    await verify(await sign({ alg: 'EdDSA' }), jwks, 'EdDSA');
  });

  it('at_hash uses SHA-256 for ES256 and SHA-512 for EdDSA (OIDC Core §3.1.3.6)', async () => {
    const accessToken = 'at_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';
    const half = (hash: string) => {
      const digest = createHash(hash).update(accessToken).digest();
      return digest.subarray(0, digest.length / 2).toString('base64url');
    };
    const es256 = (await verify(await sign({ alg: 'ES256', accessToken }), undefined, 'ES256')).payload;
    expect(es256.at_hash).toBe(half('sha256'));
    const eddsa = (await verify(await sign({ alg: 'EdDSA', accessToken }), undefined, 'EdDSA')).payload;
    expect(eddsa.at_hash).toBe(half('sha512'));
    expect(eddsa.at_hash).toHaveLength(43);
  });

  it('keeps a signer per algorithm, each reloaded after the TTL', async () => {
    let now = 0;
    const otherInstance = new SigningKeyCache(t.database.db, ctx, { monotonicNow: () => now });
    const es256 = await otherInstance.signer('ES256');
    const eddsa = await otherInstance.signer('EdDSA');
    expect([es256.alg, eddsa.alg]).toEqual(['ES256', 'EdDSA']);
    expect(es256.kid).not.toBe(eddsa.kid);
    const rotated = await rotateSigningKey(t.database.db, ctx, 'EdDSA');
    now += SIGNER_TTL_MS - 1;
    expect((await otherInstance.signer('EdDSA')).kid).toBe(eddsa.kid);
    now += 2;
    expect((await otherInstance.signer('EdDSA')).kid).toBe(rotated.kid);
    expect((await otherInstance.signer('ES256')).kid).toBe(es256.kid);
  });

  it('refuses to sign with a signer of another algorithm than the one asked for', async () => {
    const signer = await currentSigner(t.database.db, ctx, 'ES256');
    await expect(
      signIdToken(
        t.database.db,
        ctx,
        {
          user,
          clientId,
          scopes: ['openid'],
          nonce: null,
          authTime: t.clock.now(),
          amr: ['pwd'],
          alg: 'EdDSA',
        },
        signer,
      ),
    ).rejects.toThrow(/EdDSA .* ES256 key/);
  });
});
