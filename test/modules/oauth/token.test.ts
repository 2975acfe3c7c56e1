import { describe, expect, it } from 'vitest';
import { s256 } from '../../../src/lib/pkce.js';
import { hashSecret } from '../../../src/lib/secrets.js';
import { expectApiError } from '../../helpers/assertions.js';
import { makeClient, makeUser, mintCode } from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';
import { client, introspect, other, setUpTokenApp, t, user } from './token.fixture.js';

setUpTokenApp();

describe('POST /api/v1/oauth/token: client authentication', () => {
  it('accepts HTTP Basic and answers the token response with no-store', async () => {
    const res = await exchangeCode(t.app, client, await mintCode(t, client, user));
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');
    const body = res.json();
    expect(body).toEqual({
      access_token: expect.stringMatching(/^at_[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 7776000,
      scope: 'openid profile email verified',
      id_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    });
    // Stored only as a hash.
    const stored = await t.database.db
      .selectFrom('access_tokens')
      .select('token_hash')
      .where('token_hash', '=', hashSecret(body.access_token))
      .executeTakeFirst();
    expect(stored?.token_hash).toBe(hashSecret(body.access_token));
  });

  it('accepts client_secret_post', async () => {
    const code = await mintCode(t, client, user);
    const res = await postForm(t.app, '/api/v1/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(res.statusCode).toBe(200);
  });

  it('refuses both methods at once', async () => {
    const res = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'authorization_code', code: 'x', redirect_uri: client.redirectUri, client_secret: 'y' },
      { authorization: basic(client) },
    );
    expectApiError(res, 400, 'invalid_request');
  });

  it('answers no credentials, a wrong secret, an unknown and a disabled client alike: 401 invalid_client', async () => {
    const params = { grant_type: 'authorization_code', code: 'x', redirect_uri: client.redirectUri };
    const none = await postForm(t.app, '/api/v1/oauth/token', params);
    expectApiError(none, 401, 'invalid_client');
    const wrong = await postForm(t.app, '/api/v1/oauth/token', params, {
      authorization: basic({ ...client, clientSecret: `${client.clientSecret}x` }),
    });
    const unknown = await postForm(t.app, '/api/v1/oauth/token', params, {
      authorization: basic({ ...client, clientId: 'pk_unknown' }),
    });
    expectApiError(wrong, 401, 'invalid_client');
    expectApiError(unknown, 401, 'invalid_client');
    expect(unknown.json()).toEqual(wrong.json());
    const malformed = await postForm(t.app, '/api/v1/oauth/token', params, { authorization: 'Basic !!!' });
    expectApiError(malformed, 401, 'invalid_client');

    const disabled = await makeClient(t);
    await t.database.db
      .updateTable('clients')
      .set({ disabled_at: t.clock.now() })
      .where('client_id', '=', disabled.clientId)
      .execute();
    expectApiError(
      await postForm(t.app, '/api/v1/oauth/token', params, { authorization: basic(disabled) }),
      401,
      'invalid_client',
    );
  });

  it('decodes form-urlencoded Basic credentials (RFC 6749 Appendix B)', async () => {
    const encoded = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret.replace(/-/g, '%2D')}`).toString('base64')}`;
    const res = await postForm(
      t.app,
      '/api/v1/oauth/token',
      {
        grant_type: 'authorization_code',
        code: await mintCode(t, client, user),
        redirect_uri: client.redirectUri,
      },
      { authorization: encoded },
    );
    expect(res.statusCode).toBe(200);
  });
});

describe('POST /api/v1/oauth/token: request shape', () => {
  it('requires a form body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: { authorization: basic(client) },
      payload: { grant_type: 'authorization_code' },
    });
    expectApiError(res, 400, 'invalid_request');
  });

  it('refuses repeated parameters', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: { authorization: basic(client), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=authorization_code&grant_type=authorization_code&code=x',
    });
    expectApiError(res, 400, 'invalid_request');
  });

  it('answers a missing grant_type with invalid_request and an unknown one with unsupported_grant_type', async () => {
    expectApiError(
      await postForm(t.app, '/api/v1/oauth/token', {}, { authorization: basic(client) }),
      400,
      'invalid_request',
    );
    for (const grantType of ['password', 'client_credentials', 'implicit', '__proto__', 'toString']) {
      expectApiError(
        await postForm(
          t.app,
          '/api/v1/oauth/token',
          { grant_type: grantType },
          { authorization: basic(client) },
        ),
        400,
        'unsupported_grant_type',
      );
    }
  });
});

describe('authorization_code grant (RFC 6749 §4.1.3)', () => {
  it('requires code and redirect_uri', async () => {
    expectApiError(await exchangeCode(t.app, client, ''), 400, 'invalid_request');
    const res = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'authorization_code', code: await mintCode(t, client, user) },
      { authorization: basic(client) },
    );
    expectApiError(res, 400, 'invalid_request');
  });

  it('refuses an unknown code, another redirect_uri, another client and an expired code', async () => {
    expectApiError(await exchangeCode(t.app, client, 'ac_nope'), 400, 'invalid_grant');
    const code = await mintCode(t, client, user);
    expectApiError(
      await exchangeCode(t.app, client, code, { redirect_uri: 'https://site.example/callback/' }),
      400,
      'invalid_grant',
    );
    expectApiError(
      await exchangeCode(t.app, other, code, { redirect_uri: client.redirectUri }),
      400,
      'invalid_grant',
    );
    // A failed attempt does not burn the code for its rightful client.
    expect((await exchangeCode(t.app, client, code)).statusCode).toBe(200);

    const late = await mintCode(t, client, user);
    t.clock.advance(10 * 60 * 1000 + 1);
    expectApiError(await exchangeCode(t.app, client, late), 400, 'invalid_grant');
  });

  it('is single use: a second exchange fails and revokes every token issued from the code', async () => {
    const code = await mintCode(t, client, user, { scopes: ['openid', 'offline_access'] });
    const first = await exchangeCode(t.app, client, code);
    expect(first.statusCode).toBe(200);
    const { access_token: accessToken, refresh_token: refreshToken } = first.json();
    expect((await introspect(accessToken)).active).toBe(true);

    expectApiError(await exchangeCode(t.app, client, code), 400, 'invalid_grant');
    expect(await introspect(accessToken)).toEqual({ active: false });
    expect(await introspect(refreshToken)).toEqual({ active: false });
    const userinfo = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expectApiError(userinfo, 401, 'invalid_token');
  });

  it('gives exactly one success to 10 parallel exchanges of one code', async () => {
    const code = await mintCode(t, client, user);
    const results = await Promise.all(Array.from({ length: 10 }, () => exchangeCode(t.app, client, code)));
    const statuses = results.map((res) => res.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    for (const res of results.filter((r) => r.statusCode !== 200)) expectApiError(res, 400, 'invalid_grant');
    const grants = await t.database.db
      .selectFrom('grants')
      .select(['revoked_at'])
      .where('code_hash', '=', hashSecret(code))
      .execute();
    expect(grants).toHaveLength(1);
    expect(grants[0]?.revoked_at).not.toBeNull(); // the duplicates revoked what the winner got
  });

  it('refuses the code of a user disabled since', async () => {
    const victim = await makeUser(t);
    const code = await mintCode(t, client, victim);
    await t.database.db
      .updateTable('users')
      .set({ disabled_at: t.clock.now() })
      .where('id', '=', victim.id)
      .execute();
    expectApiError(await exchangeCode(t.app, client, code), 400, 'invalid_grant');
  });

  it('issues a refresh token only with offline_access', async () => {
    const without = (await exchangeCode(t.app, client, await mintCode(t, client, user))).json();
    expect(without.refresh_token).toBeUndefined();
    const withIt = (
      await exchangeCode(t.app, client, await mintCode(t, client, user, { scopes: ['offline_access'] }))
    ).json();
    expect(withIt.refresh_token).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
    expect(withIt.id_token).toBeUndefined(); // no openid, no id_token
    expect(withIt.scope).toBe('offline_access');
  });
});

describe('PKCE (RFC 7636)', () => {
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

  it('accepts the verifier of RFC 7636 Appendix B for its challenge, both as the RFC prints them', async () => {
    const code = await mintCode(t, client, user, {
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    });
    const res = await exchangeCode(t.app, client, code, {
      code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    });
    expect(res.statusCode).toBe(200);
  });

  it('accepts the matching verifier', async () => {
    const code = await mintCode(t, client, user, { codeChallenge: s256(verifier) });
    expect((await exchangeCode(t.app, client, code, { code_verifier: verifier })).statusCode).toBe(200);
  });

  it('refuses a wrong or missing verifier', async () => {
    const code = await mintCode(t, client, user, { codeChallenge: s256(verifier) });
    expectApiError(await exchangeCode(t.app, client, code), 400, 'invalid_grant');
    expectApiError(
      await exchangeCode(t.app, client, code, { code_verifier: `${verifier.slice(0, -1)}A` }),
      400,
      'invalid_grant',
    );
    expectApiError(await exchangeCode(t.app, client, code, { code_verifier: 'short' }), 400, 'invalid_grant');
  });

  it('refuses a verifier for a code issued without a challenge (downgrade)', async () => {
    const code = await mintCode(t, client, user);
    expectApiError(
      await exchangeCode(t.app, client, code, { code_verifier: verifier }),
      400,
      'invalid_grant',
    );
  });
});
