import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretMatchesHash } from '../../../src/lib/secrets.js';
import { findClientWithSecretHash } from '../../../src/modules/clients/clients.repository.js';
import { rotateClientSecret } from '../../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { depsOf, makeClient, makeUser, mintCode, type TestClient } from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';

/*
 * A rotation with an overlap keeps the replaced secret valid beside the new one until the
 * overlap ends, at the token endpoint and every other endpoint that authenticates a client,
 * through the instance's client cache (createTestApp runs with one, as production does).
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const rotate = (client: TestClient, overlapSeconds?: number) =>
  rotateClientSecret(t.database.db, depsOf(t).ctx, client.clientId, { overlapSeconds });

async function exchangeStatus(client: TestClient, as: TestClient): Promise<number> {
  const user = await makeUser(t);
  return (await exchangeCode(t.app, as, await mintCode(t, client, user))).statusCode;
}

const revokeStatus = async (as: TestClient) =>
  (await postForm(t.app, '/api/v1/oauth/revoke', { token: 'at_unknown' }, { authorization: basic(as) }))
    .statusCode;

/** RFC 9126 §2: the PAR endpoint authenticates the client first; what it says of the request after does not matter here. */
const parStatus = async (as: TestClient) =>
  (
    await postForm(
      t.app,
      '/api/v1/oauth/par',
      { response_type: 'code', redirect_uri: as.redirectUri, scope: 'openid' },
      { authorization: basic(as) },
    )
  ).statusCode;

const introspectStatus = async (as: TestClient) =>
  (await postForm(t.app, '/api/v1/oauth/introspect', { token: 'at_unknown' }, { authorization: basic(as) }))
    .statusCode;

describe('rotating a client secret with an overlap', () => {
  it('accepts both secrets until the overlap ends, then only the new one', async () => {
    const old = await makeClient(t);
    // Warm the cache with the row as it was before the rotation.
    expect(await exchangeStatus(old, old)).toBe(200);
    t.clock.set('2026-06-01T12:00:00Z');
    const rotated = await rotate(old, 3600);
    expect(rotated.previous_secret_expires_at).toBe('2026-06-01T13:00:00.000Z');
    await t.sync();
    const renewed = { ...old, clientSecret: rotated.client_secret };

    expect(await exchangeStatus(old, old)).toBe(200);
    expect(await exchangeStatus(old, renewed)).toBe(200);
    expect(await revokeStatus(old)).toBe(200);
    expect(await introspectStatus(old)).toBe(200);
    expect(await parStatus(old)).not.toBe(401);

    t.clock.set('2026-06-01T12:59:59Z');
    expect(await exchangeStatus(old, old)).toBe(200);
    t.clock.set('2026-06-01T13:00:00Z');
    expect(await exchangeStatus(old, old)).toBe(401);
    expect(await revokeStatus(old)).toBe(401);
    expect(await introspectStatus(old)).toBe(401);
    expect(await parStatus(old)).toBe(401);
    expect(await parStatus(renewed)).not.toBe(401);
    expect(await exchangeStatus(old, renewed)).toBe(200);
    t.clock.set('2026-06-01T12:00:00Z');
  });

  it('with overlap 0 (the default) the old secret fails at once, through a warm cache', async () => {
    const old = await makeClient(t);
    expect(await exchangeStatus(old, old)).toBe(200);
    const rotated = await rotate(old, 0);
    expect(rotated).not.toHaveProperty('previous_secret_expires_at');
    await t.sync();
    expect(await exchangeStatus(old, old)).toBe(401);
    expect(await exchangeStatus(old, { ...old, clientSecret: rotated.client_secret })).toBe(200);
    const row = await findClientWithSecretHash(t.database.db, old.clientId, t.clock.now());
    expect(row?.secrets).toEqual([{ hash: expect.any(String), expiresAt: null }]);
  });

  it('keeps only the secret just replaced: a second rotation drops the first one at once', async () => {
    const first = await makeClient(t);
    const second = { ...first, clientSecret: (await rotate(first, 86_400)).client_secret };
    const third = { ...first, clientSecret: (await rotate(second, 86_400)).client_secret };
    await t.sync();
    expect(await exchangeStatus(first, first)).toBe(401);
    expect(await exchangeStatus(first, second)).toBe(200);
    expect(await exchangeStatus(first, third)).toBe(200);
  });

  it('stores only hashes, never the secrets', async () => {
    const old = await makeClient(t);
    const rotated = await rotate(old, 600);
    const row = await findClientWithSecretHash(t.database.db, old.clientId, t.clock.now());
    const [newest, previous] = row?.secrets ?? [];
    if (!row || !newest || !previous) throw new Error('both hashes are expected');
    expect(secretMatchesHash(old.clientSecret, previous.hash)).toBe(true);
    expect(secretMatchesHash(rotated.client_secret, newest.hash)).toBe(true);
    expect(newest.expiresAt).toBeNull();
    expect(JSON.stringify(row)).not.toContain(old.clientSecret);
    expect(JSON.stringify(row)).not.toContain(rotated.client_secret);
  });

  it('a disabled client is refused with either secret during the overlap', async () => {
    const old = await makeClient(t);
    const rotated = await rotate(old, 3600);
    await t.database.db
      .updateTable('clients')
      .set({ disabled_at: t.clock.now() })
      .where('client_id', '=', old.clientId)
      .execute();
    await t.sync();
    expect(await revokeStatus(old)).toBe(401);
    expect(await revokeStatus({ ...old, clientSecret: rotated.client_secret })).toBe(401);
  });

  it('refuses an overlap outside 0 to 7 days, naming the field, and changes nothing', async () => {
    const old = await makeClient(t);
    for (const overlapSeconds of [-1, 1.5, 604_801, Number.NaN]) {
      await expect(rotate(old, overlapSeconds)).rejects.toMatchObject({
        error: 'invalid_request',
        fields: { overlap: expect.stringContaining('604800') },
      });
    }
    expect(await exchangeStatus(old, old)).toBe(200);
    expect((await rotate(old, 604_800)).previous_secret_expires_at).toBe('2026-06-08T12:00:00.000Z');
  });
});
