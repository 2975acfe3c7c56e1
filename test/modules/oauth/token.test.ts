import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s256 } from '../../../src/lib/pkce.js';
import { hashSecret } from '../../../src/lib/secrets.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { makeClient, makeUser, mintCode, type TestClient, type TestUser } from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';

let t: TestApp;
let client: TestClient;
let other: TestClient;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t);
  other = await makeClient(t);
  user = await makeUser(t);
});
afterAll(() => t.close());

const introspect = async (token: string, as: TestClient = client) =>
  (await postForm(t.app, '/api/v1/oauth/introspect', { token }, { authorization: basic(as) })).json();

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

describe('refresh_token grant', () => {
  const refresh = (as: TestClient, refreshToken: string, extra: Record<string, string> = {}) =>
    postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra },
      { authorization: basic(as) },
    );

  const start = async () =>
    (
      await exchangeCode(
        t.app,
        client,
        await mintCode(t, client, user, { scopes: ['openid', 'profile', 'offline_access'] }),
      )
    ).json() as { access_token: string; refresh_token: string };

  it('rotates the refresh token', async () => {
    const first = await start();
    const res = await refresh(client, first.refresh_token);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const second = res.json();
    expect(second).toMatchObject({
      token_type: 'Bearer',
      expires_in: 7776000,
      scope: 'openid profile offline_access',
    });
    expect(second.refresh_token).toMatch(/^rt_/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await refresh(client, second.refresh_token)).statusCode).toBe(200);
  });

  it('revokes the whole grant when a rotated refresh token is used again', async () => {
    const first = await start();
    const second = (await refresh(client, first.refresh_token)).json();
    expectApiError(await refresh(client, first.refresh_token), 400, 'invalid_grant');
    expectApiError(await refresh(client, second.refresh_token), 400, 'invalid_grant');
    expect(await introspect(second.access_token)).toEqual({ active: false });
    expect(await introspect(first.access_token)).toEqual({ active: false });
  });

  it('allows a narrower scope and refuses a wider one', async () => {
    const first = await start();
    const narrow = await refresh(client, first.refresh_token, { scope: 'profile' });
    expect(narrow.json().scope).toBe('profile');
    expectApiError(
      await refresh(client, narrow.json().refresh_token, { scope: 'profile email' }),
      400,
      'invalid_scope',
    );
  });

  it("refuses another client's refresh token, an unknown one and a missing one", async () => {
    const first = await start();
    expectApiError(await refresh(other, first.refresh_token), 400, 'invalid_grant');
    expect((await refresh(client, first.refresh_token)).statusCode).toBe(200); // still the owner's
    expectApiError(await refresh(client, 'rt_unknown'), 400, 'invalid_grant');
    expectApiError(
      await postForm(
        t.app,
        '/api/v1/oauth/token',
        { grant_type: 'refresh_token' },
        { authorization: basic(client) },
      ),
      400,
      'invalid_request',
    );
  });

  it('writes nothing when it refuses: the refresh token still works after a wider or unknown scope', async () => {
    const first = await start();
    expectApiError(
      await refresh(client, first.refresh_token, { scope: 'profile email' }),
      400,
      'invalid_scope',
    );
    expectApiError(
      await refresh(client, first.refresh_token, { scope: 'profile nonsense' }),
      400,
      'invalid_scope',
    );
    expectApiError(await refresh(client, first.refresh_token, { scope: ' ' }), 400, 'invalid_scope');
    const res = await refresh(client, first.refresh_token, { scope: 'profile profile openid' });
    expect(res.statusCode).toBe(200);
    expect(res.json().scope).toBe('openid profile');
  });

  it('refuses the refresh token of a disabled user, and works again once the user is enabled', async () => {
    const owner = await makeUser(t);
    const code = await mintCode(t, client, owner, { scopes: ['openid', 'offline_access'] });
    const first = (await exchangeCode(t.app, client, code)).json() as { refresh_token: string };
    const setDisabled = (at: Date | null) =>
      t.database.db.updateTable('users').set({ disabled_at: at }).where('id', '=', owner.id).execute();
    await setDisabled(t.clock.now());
    expectApiError(await refresh(client, first.refresh_token), 400, 'invalid_grant');
    // Only the disabled user refused it (set here in the table; `idp users disable` also revokes
    // the grants): with the user enabled again, the unused token works.
    await setDisabled(null);
    expect((await refresh(client, first.refresh_token)).statusCode).toBe(200);
  });

  it('gives one of two concurrent uses of a refresh token new tokens, and treats the other as reuse', async () => {
    const first = await start();
    const answers = await Promise.all([
      refresh(client, first.refresh_token),
      refresh(client, first.refresh_token),
    ]);
    expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 400]);
    const winner = answers.find((res) => res.statusCode === 200)?.json() as { refresh_token: string };
    // The second use was a reuse: the grant is revoked, so the winner's tokens stop working too.
    expectApiError(await refresh(client, winner.refresh_token), 400, 'invalid_grant');
  });

  it('refuses an expired refresh token', async () => {
    const first = await start();
    t.clock.advance(t.config.REFRESH_TOKEN_TTL_SECONDS * 1000 + 1000);
    expectApiError(await refresh(client, first.refresh_token), 400, 'invalid_grant');
  });
});

describe('revocation (RFC 7009) and introspection (RFC 7662)', () => {
  const revoke = (token: string, as: TestClient = client, hint?: string) =>
    postForm(t.app, '/api/v1/oauth/revoke', { token, token_type_hint: hint }, { authorization: basic(as) });

  it('introspects an active access token with the RFC 7662 fields', async () => {
    const tokens = (await exchangeCode(t.app, client, await mintCode(t, client, user))).json();
    const now = Math.floor(t.clock.now().getTime() / 1000);
    expect(await introspect(tokens.access_token)).toEqual({
      active: true,
      scope: 'openid profile email verified',
      client_id: client.clientId,
      username: user.username,
      token_type: 'Bearer',
      exp: now + 7776000,
      iat: now,
      sub: String(user.id),
      iss: t.config.PUBLIC_URL,
    });
  });

  it("shows another client's token as inactive and does not revoke it", async () => {
    const tokens = (await exchangeCode(t.app, client, await mintCode(t, client, user))).json();
    expect(await introspect(tokens.access_token, other)).toEqual({ active: false });
    const res = await revoke(tokens.access_token, other);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect((await introspect(tokens.access_token)).active).toBe(true);
  });

  it('revokes an access token; unknown tokens are answered 200 too', async () => {
    const tokens = (await exchangeCode(t.app, client, await mintCode(t, client, user))).json();
    expect((await revoke(tokens.access_token)).json()).toEqual({ ok: true });
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect((await revoke('at_unknown')).statusCode).toBe(200);
    expect((await revoke('at_unknown', client, 'refresh_token')).statusCode).toBe(200);
  });

  it('revokes the grant of a refresh token, with its access tokens', async () => {
    const tokens = (
      await exchangeCode(
        t.app,
        client,
        await mintCode(t, client, user, { scopes: ['openid', 'offline_access'] }),
      )
    ).json();
    expect((await introspect(tokens.refresh_token)).token_type).toBe('refresh_token');
    await revoke(tokens.refresh_token, client, 'refresh_token');
    expect(await introspect(tokens.refresh_token)).toEqual({ active: false });
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
  });

  it('requires client authentication and a token', async () => {
    expectApiError(await postForm(t.app, '/api/v1/oauth/revoke', { token: 'x' }), 401, 'invalid_client');
    expectApiError(await postForm(t.app, '/api/v1/oauth/introspect', { token: 'x' }), 401, 'invalid_client');
    expectApiError(
      await postForm(t.app, '/api/v1/oauth/revoke', {}, { authorization: basic(client) }),
      400,
      'invalid_request',
    );
    expectApiError(
      await postForm(t.app, '/api/v1/oauth/introspect', {}, { authorization: basic(client) }),
      400,
      'invalid_request',
    );
  });

  it('shows expired tokens and tokens of disabled users as inactive', async () => {
    const tokens = (await exchangeCode(t.app, client, await mintCode(t, client, user))).json();
    const victim = await makeUser(t);
    const victims = (await exchangeCode(t.app, client, await mintCode(t, client, victim))).json();
    await t.database.db
      .updateTable('users')
      .set({ disabled_at: t.clock.now() })
      .where('id', '=', victim.id)
      .execute();
    expect(await introspect(victims.access_token)).toEqual({ active: false });
    t.clock.advance(7776000 * 1000 + 1000);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
  });
});
