import { describe, expect, it } from 'vitest';
import { expectApiError } from '../../helpers/assertions.js';
import { expectNoStore, setUpUserinfoApp, t, token, userId, userinfo } from './userinfo.fixture.js';

/*
 * Userinfo and /me (OIDC Core §5.3): the profile behind a valid bearer token,
 * gated by its granted scopes.
 */

setUpUserinfoApp();

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

describe('scope gating: userinfo and /me follow the granted scopes exactly', () => {
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
