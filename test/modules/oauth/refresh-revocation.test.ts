import { describe, expect, it } from 'vitest';
import { expectApiError } from '../../helpers/assertions.js';
import { makeUser, mintCode, type TestClient } from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';
import { client, introspect, other, setUpTokenApp, t, user } from './token.fixture.js';

setUpTokenApp();

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
