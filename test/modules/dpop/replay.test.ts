import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpired } from '../../../src/modules/housekeeping/purge.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { createTestDatabase, type TestDatabase, testRedisUrl } from '../../helpers/database.js';
import { dpopKey, dpopProof } from '../../helpers/dpop.js';
import { depsOf, makeClient, type TestClient } from '../../helpers/factories.js';
import { basic, postForm } from '../../helpers/http.js';

/*
 * RFC 9449 §11.1: a proof is accepted once, also when it is replayed to another instance; in the
 * database by default, in Redis with REDIS_URL.
 */

const refreshWith = (t: TestApp, client: TestClient, proof: string) =>
  postForm(
    t.app,
    '/api/v1/oauth/token',
    { grant_type: 'refresh_token', refresh_token: 'rt_unknown' },
    { authorization: basic(client), dpop: proof },
  );

/** Two instances of the app on one database, each with the environment `env`. */
function twoInstances(env: Record<string, string> = {}) {
  const state = {} as { database: TestDatabase; a: TestApp; b: TestApp; client: TestClient };
  beforeAll(async () => {
    state.database = await createTestDatabase();
    state.a = await createTestApp({ database: state.database, env });
    state.b = await createTestApp({ database: state.database, env });
    state.client = await makeClient(state.a);
  });
  afterAll(async () => {
    await state.a.app.close();
    await state.b.app.close();
    await state.database.drop();
  });
  return state;
}

const proofRows = (database: TestDatabase) => database.db.selectFrom('dpop_proofs').selectAll().execute();

describe('in the database', () => {
  const s = twoInstances();

  it('refuses on one instance a proof the other accepted, and keeps only a hash of it', async () => {
    const key = await dpopKey();
    const proof = await dpopProof(s.a, key, { jti: 'the-jti-of-one-proof' });
    expectApiError(await refreshWith(s.a, s.client, proof), 400, 'invalid_grant'); // the proof passed
    const replayed = await refreshWith(s.b, s.client, proof);
    expectApiError(replayed, 400, 'invalid_dpop_proof');
    const rows = await proofRows(s.database);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain('the-jti-of-one-proof');
    // The same jti under another key is another proof (RFC 9449 §11.1 keys it by the key).
    const otherKey = await dpopProof(s.a, await dpopKey(), { jti: 'the-jti-of-one-proof' });
    expectApiError(await refreshWith(s.b, s.client, otherKey), 400, 'invalid_grant');
  });

  it('is purged by the housekeeping once the proof could no longer be accepted', async () => {
    const ctx = depsOf(s.a).ctx;
    const options = { batchSize: 100, pauseMs: 0 };
    expect((await purgeExpired(s.database.db, ctx, options)).dpop_proofs).toBe(0);
    s.a.clock.advance(5 * 60_000 + 1000);
    expect((await purgeExpired(s.database.db, ctx, options)).dpop_proofs).toBe(2);
    expect(await proofRows(s.database)).toEqual([]);
  });
});

describe.skipIf(testRedisUrl === undefined)('in Redis (needs TEST_REDIS_URL)', () => {
  const s = twoInstances({ REDIS_URL: testRedisUrl as string });

  it('refuses on one instance a proof the other accepted, and writes nothing to the database', async () => {
    const proof = await dpopProof(s.a, await dpopKey());
    expectApiError(await refreshWith(s.a, s.client, proof), 400, 'invalid_grant');
    expectApiError(await refreshWith(s.b, s.client, proof), 400, 'invalid_dpop_proof');
    expect(await proofRows(s.database)).toEqual([]);
  });
});

describe('a Redis that is down', () => {
  const s = twoInstances({ REDIS_URL: 'redis://127.0.0.1:1' });

  it('refuses DPoP requests with 503 unavailable (a replay could not be ruled out)', async () => {
    const res = await refreshWith(s.a, s.client, await dpopProof(s.a, await dpopKey()));
    expectApiError(res, 503, 'unavailable');
    const plain = await postForm(
      s.a.app,
      '/api/v1/oauth/token',
      { grant_type: 'refresh_token', refresh_token: 'rt_unknown' },
      { authorization: basic(s.client) },
    );
    expectApiError(plain, 400, 'invalid_grant');
  });
});
