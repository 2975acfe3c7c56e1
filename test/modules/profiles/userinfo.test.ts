import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../../src/modules/accounts/accounts.service.js';
import { createClient } from '../../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { depsOf } from '../../helpers/oauth.js';
import { insertAccessToken } from '../../helpers/tokens.js';

/*
 * Bearer authentication (CONTRACT.md §4, RFC 6750) and the routes behind it: userinfo and /me.
 * Tokens are inserted directly (test/helpers/tokens.ts), as the token endpoint stores them.
 */

let t: TestApp;
let userId: number;
let clientId: string;

const ALL = ['openid', 'profile', 'email', 'verified'];

beforeAll(async () => {
  t = await createTestApp();
  const user = await createUser(t.database.db, t.clock, {
    username: 'bearer_bob',
    password: 'correct horse battery staple',
    email: 'bob@example.com',
    emailVerified: true,
    displayName: 'Bob B',
    verificationLevel: 1,
  });
  userId = user.id;
  const client = await createClient(t.database.db, depsOf(t).ctx, {
    name: 'Shop',
    siteUrl: 'https://shop.example',
    redirectUris: ['https://shop.example/cb'],
  });
  clientId = client.client_id;
});
afterAll(() => t.close());

const token = (
  options: { scopes?: string[]; expiresAt?: Date; revoked?: boolean; grantRevoked?: boolean } = {},
) => insertAccessToken(t.database.db, { userId, clientId, scopes: ALL, clock: t.clock, ...options });

const userinfo = (headers: Record<string, string> = {}, url = '/api/v1/oauth/userinfo') =>
  t.app.inject({ method: 'GET', url, headers });

function expectNoStore(res: LightMyRequestResponse): void {
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers.pragma).toBe('no-cache');
}

describe('bearer authentication: unauthorized (no usable Authorization header)', () => {
  it('refuses a request without an Authorization header, without an error attribute', async () => {
    const res = await userinfo();
    expectApiError(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="idp"');
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
      expect(res.headers['www-authenticate'], authorization).toBe('Bearer realm="idp"');
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

describe('GET and POST /api/v1/oauth/userinfo', () => {
  it('answers a valid token with the profile, never cached', async () => {
    const res = await userinfo({ authorization: `Bearer ${await token()}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expectNoStore(res);
    expect(res.json()).toMatchObject({ sub: String(userId), id: userId });
  });

  it('takes the scheme name in any case', async () => {
    const valid = await token();
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      expect((await userinfo({ authorization: `${scheme} ${valid}` })).statusCode).toBe(200);
    }
  });

  it('answers POST the same as GET (OIDC Core §5.3.1)', async () => {
    const valid = await token();
    const get = await userinfo({ authorization: `Bearer ${valid}` });
    const post = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${valid}` },
    });
    expect(post.statusCode).toBe(200);
    expectNoStore(post);
    expect(post.json()).toEqual(get.json());
    const postForm = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${valid}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(postForm.statusCode).toBe(200);
  });

  it('never shows the password hash or internal columns', async () => {
    const res = await userinfo({ authorization: `Bearer ${await token()}` });
    expect(res.body).not.toMatch(/password|argon2|disabled_at|created_at/);
  });

  it('refuses other methods with 405', async () => {
    expectApiError(
      await t.app.inject({ method: 'DELETE', url: '/api/v1/oauth/userinfo' }),
      405,
      'method_not_allowed',
    );
  });
});

describe('scope gating (CONTRACT.md §5): userinfo and /me follow the granted scopes exactly', () => {
  const EMAIL = ['email', 'email_verified'];
  const PROFILE = [
    'name',
    'nickname',
    'preferred_username',
    'username',
    'display_name',
    'picture',
    'avatar_url',
  ];
  const VERIFIED = ['verified', 'verification_level', 'verification_tier', 'verified_badge'];

  const claimsWith = async (scopes: string[]) => {
    const res = await userinfo({ authorization: `Bearer ${await token({ scopes })}` });
    expect(res.statusCode).toBe(200);
    return res.json() as Record<string, unknown>;
  };

  it('always returns sub and id', async () => {
    const claims = await claimsWith(['openid']);
    expect(claims).toEqual({ sub: String(userId), id: userId });
  });

  it('returns the e-mail claims only with the email scope', async () => {
    const without = await claimsWith(['openid', 'profile', 'verified']);
    for (const claim of EMAIL) expect(without).not.toHaveProperty(claim);
    const withEmail = await claimsWith(['openid', 'email']);
    expect(withEmail).toMatchObject({ email: 'bob@example.com', email_verified: true });
    for (const claim of [...PROFILE, ...VERIFIED]) expect(withEmail).not.toHaveProperty(claim);
  });

  it('returns the profile claims only with the profile scope', async () => {
    const without = await claimsWith(['openid', 'email', 'verified']);
    for (const claim of [...PROFILE, 'game', 'game_name', 'game_linked', 'tag']) {
      expect(without).not.toHaveProperty(claim);
    }
    const withProfile = await claimsWith(['profile']);
    expect(withProfile).toMatchObject({
      sub: String(userId),
      id: userId,
      name: 'Bob B',
      nickname: 'Bob B',
      preferred_username: 'bearer_bob',
      username: 'bearer_bob',
      display_name: 'Bob B',
    });
    for (const claim of PROFILE) expect(withProfile).toHaveProperty(claim);
    for (const claim of [...EMAIL, ...VERIFIED]) expect(withProfile).not.toHaveProperty(claim);
  });

  it('returns the verification claims only with the verified scope', async () => {
    const without = await claimsWith(['openid', 'profile', 'email']);
    for (const claim of VERIFIED) expect(without).not.toHaveProperty(claim);
    const withVerified = await claimsWith(['verified']);
    expect(withVerified).toMatchObject({
      verified: 1,
      verification_level: 1,
      verification_tier: 'standard',
      verified_badge: true,
    });
    for (const claim of [...EMAIL, ...PROFILE]) expect(withVerified).not.toHaveProperty(claim);
  });
});

describe('GET /api/v1/me', () => {
  it('answers {ok:true, user:{…}, …the same fields}, never cached', async () => {
    const valid = await token();
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/me',
      headers: { authorization: `Bearer ${valid}` },
    });
    expect(res.statusCode).toBe(200);
    expectNoStore(res);
    const body = res.json() as Record<string, unknown> & { user: Record<string, unknown> };
    const info = (await userinfo({ authorization: `Bearer ${valid}` })).json();
    expect(body.ok).toBe(true);
    expect(body.user).toEqual(info);
    const merged = Object.fromEntries(Object.entries(body).filter(([key]) => key !== 'ok' && key !== 'user'));
    expect(merged).toEqual(info);
    expect(body.user).toMatchObject({ sub: String(userId), id: userId, email: 'bob@example.com' });
  });

  it('follows the granted scopes as userinfo does', async () => {
    const valid = await token({ scopes: ['openid', 'profile'] });
    const body = (
      await t.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${valid}` } })
    ).json();
    expect(body).not.toHaveProperty('email');
    expect(body.user).not.toHaveProperty('email');
    expect(body).toMatchObject({ ok: true, username: 'bearer_bob', user: { username: 'bearer_bob' } });
  });

  it('applies the same bearer rules', async () => {
    expectApiError(await t.app.inject({ method: 'GET', url: '/api/v1/me' }), 401, 'unauthorized');
    expectApiError(
      await t.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: 'Bearer at_nope' } }),
      401,
      'invalid_token',
    );
  });
});

describe('the route catalogue', () => {
  it('lists userinfo and /me as bearer routes', async () => {
    const { routes } = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json() as {
      routes: Array<{ method: string; path: string; auth: string }>;
    };
    const auth = (method: string, path: string) =>
      routes.find((route) => route.method === method && route.path === path)?.auth;
    expect(auth('GET', '/api/v1/oauth/userinfo')).toBe('bearer');
    expect(auth('POST', '/api/v1/oauth/userinfo')).toBe('bearer');
    expect(auth('GET', '/api/v1/me')).toBe('bearer');
    expect(auth('GET', '/api/v1/oauth/jwks')).toBe('public');
    expect(auth('GET', '/.well-known/openid-configuration')).toBe('public');
  });
});
