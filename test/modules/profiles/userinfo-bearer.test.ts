import { describe, expect, it } from 'vitest';
import { expectApiError } from '../../helpers/assertions.js';
import { clientId, setUpUserinfoApp, t, token, userId, userinfo } from './userinfo.fixture.js';

/*
 * Bearer authentication (RFC 6750) as userinfo meets it: unauthorized without a
 * usable Authorization header, invalid_token for a well-formed token that does not work.
 */

setUpUserinfoApp();

describe('bearer authentication: unauthorized (no usable Authorization header)', () => {
  it('refuses a request without an Authorization header, without an error attribute', async () => {
    const res = await userinfo();
    expectApiError(res, 401, 'unauthorized');
    // RFC 9449 §7.1: the route takes DPoP-bound tokens too, so both challenges are sent.
    expect(res.headers['www-authenticate']).toBe(
      'Bearer realm="idp", DPoP realm="idp", algs="ES256 EdDSA Ed25519"',
    );
  });

  it('refuses other schemes and malformed bearer credentials', async () => {
    const valid = await token();
    for (const authorization of [
      'Basic dXNlcjpwYXNz',
      `Basic ${valid}`,
      'Bearer',
      'Bearer ',
      `Token ${valid}`,
      `Bearer ${valid} extra`,
      `Bearer "${valid}"`,
      `Bearer ${valid},x`,
      `Bearer:${valid}`,
      `Bearer\t${valid}`,
      valid,
    ]) {
      const res = await userinfo({ authorization });
      expectApiError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate'], authorization).toBe(
        'Bearer realm="idp", DPoP realm="idp", algs="ES256 EdDSA Ed25519"',
      );
    }
  });

  it('refuses a token in the query string, even a valid one, also beside a valid header', async () => {
    const valid = await token();
    expectApiError(await userinfo({}, `/api/v1/oauth/userinfo?access_token=${valid}`), 401, 'unauthorized');
    expectApiError(
      await userinfo({ authorization: `Bearer ${valid}` }, `/api/v1/oauth/userinfo?access_token=${valid}`),
      401,
      'unauthorized',
    );
  });

  it('refuses a token in a form body', async () => {
    const valid = await token();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/userinfo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `access_token=${valid}`,
    });
    expectApiError(res, 401, 'unauthorized');
  });
});

describe('bearer authentication: invalid_token (a well-formed token that does not work)', () => {
  it('refuses an unknown token, whatever its prefix', async () => {
    for (const unknown of [
      'at_unknownunknownunknownunknown',
      'xyz',
      'xyz_0123456789abcdef',
      'a.b-c_d~e+f/g==',
    ]) {
      const res = await userinfo({ authorization: `Bearer ${unknown}` });
      expectApiError(res, 401, 'invalid_token');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="idp", error="invalid_token"/);
    }
  });

  it('refuses an expired token, and accepts it until then', async () => {
    const expiresAt = new Date(t.clock.now().getTime() + 60_000);
    const expiring = await token({ expiresAt });
    expect((await userinfo({ authorization: `Bearer ${expiring}` })).statusCode).toBe(200);
    t.clock.set(expiresAt);
    expectApiError(await userinfo({ authorization: `Bearer ${expiring}` }), 401, 'invalid_token');
    t.clock.set('2026-06-01T12:00:00Z');
  });

  it('refuses a revoked token and a token of a revoked grant', async () => {
    expectApiError(
      await userinfo({ authorization: `Bearer ${await token({ revoked: true })}` }),
      401,
      'invalid_token',
    );
    expectApiError(
      await userinfo({ authorization: `Bearer ${await token({ grantRevoked: true })}` }),
      401,
      'invalid_token',
    );
    // Revoked after issue: it stops working at once.
    const live = await token();
    expect((await userinfo({ authorization: `Bearer ${live}` })).statusCode).toBe(200);
    await t.database.db.updateTable('access_tokens').set({ revoked_at: t.clock.now() }).execute();
    // As when another process revokes it: once the database announced it.
    await t.sync();
    expectApiError(await userinfo({ authorization: `Bearer ${live}` }), 401, 'invalid_token');
  });

  it('refuses the tokens of a disabled user and of a disabled client, and they work again when re-enabled', async () => {
    const live = await token();
    await t.database.db
      .updateTable('users')
      .set({ disabled_at: t.clock.now() })
      .where('id', '=', userId)
      .execute();
    await t.sync(); // as when the operator's CLI, another process, did it
    expectApiError(await userinfo({ authorization: `Bearer ${live}` }), 401, 'invalid_token');
    await t.database.db.updateTable('users').set({ disabled_at: null }).where('id', '=', userId).execute();
    await t.sync();
    expect((await userinfo({ authorization: `Bearer ${live}` })).statusCode).toBe(200);

    await t.database.db
      .updateTable('clients')
      .set({ disabled_at: t.clock.now() })
      .where('client_id', '=', clientId)
      .execute();
    await t.sync();
    expectApiError(await userinfo({ authorization: `Bearer ${live}` }), 401, 'invalid_token');
    await t.database.db
      .updateTable('clients')
      .set({ disabled_at: null })
      .where('client_id', '=', clientId)
      .execute();
    await t.sync();
    expect((await userinfo({ authorization: `Bearer ${live}` })).statusCode).toBe(200);
  });
});
