import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppleStandIn, startAppleStandIn } from './apple-standin.js';
import { type GithubStandIn, startGithubStandIn } from './github-standin.js';
import { type OidcStandIn, startOidcStandIn } from './oidc-standin.js';
import {
  appleClientSecret,
  authorizationUrl,
  DEFAULT_CALLBACK,
  discover,
  type FlowChecks,
  followFormPost,
  followRedirect,
  githubConfiguration,
  newChecks,
} from './walk.js';

/*
 * Each stand-in walked as the service walks a provider: openid-client 6, code flow with PKCE,
 * state and (OpenID) nonce, the stand-in's redirect or form post followed by hand.
 */

const NOT_JSON = { code: 'OAUTH_RESPONSE_IS_NOT_JSON' };

describe('the OpenID stand-in (oidc-provider)', () => {
  let op: OidcStandIn;
  let config: client.Configuration;
  const alice = {
    sub: 'sub-alice',
    email: 'alice@example.test',
    email_verified: true,
    name: 'Alice A',
    preferred_username: 'alice',
    amr: ['pwd', 'otp', 'mfa'],
  };
  const bob = { sub: 'sub-bob', email: 'bob@example.test', email_verified: false };
  beforeAll(async () => {
    op = await startOidcStandIn({ clientId: 'idp', clientSecret: 'idp-secret', accounts: { alice, bob } });
    config = await discover(op.url, 'idp', client.ClientSecretBasic('idp-secret'));
  });
  afterAll(() => op.stop());

  it('announces itself as issuer, with RFC 9207 iss, PKCE S256 and both secret methods', () => {
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(op.url);
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_basic', 'client_secret_post']),
    );
  });

  it('approves nextAccount in one redirect, its claims and amr in the id_token and at userinfo', async () => {
    op.requests.length = 0;
    const c = await newChecks();
    const back = await followRedirect(authorizationUrl(config, c, { scope: 'openid email profile' }));
    expect(back.origin + back.pathname).toBe(DEFAULT_CALLBACK);
    expect(back.searchParams.get('iss')).toBe(op.url);
    const tokens = await client.authorizationCodeGrant(config, back, c);
    expect(tokens.claims()).toMatchObject({ iss: op.url, aud: 'idp', nonce: c.expectedNonce, ...alice });
    const info = await client.fetchUserInfo(config, tokens.access_token, 'sub-alice');
    expect(info).toMatchObject({ email: alice.email, name: 'Alice A', preferred_username: 'alice' });
    expect(op.requests.find((each) => each.path === '/auth')?.params).toMatchObject({
      code_challenge: c.challenge,
      code_challenge_method: 'S256',
      nonce: c.expectedNonce,
      state: c.expectedState,
    });
    const token = op.requests.find((each) => each.path === '/token');
    expect(token?.params.code_verifier).toBe(c.pkceCodeVerifier);
    expect(token?.headers.authorization).toMatch(/^Basic /);
  });

  it('approves whoever nextAccount names, and takes client_secret_post as well', async () => {
    op.nextAccount = 'bob';
    const post = await discover(op.url, 'idp', client.ClientSecretPost('idp-secret'));
    const c = await newChecks();
    const back = await followRedirect(authorizationUrl(post, c, { scope: 'openid email' }));
    const tokens = await client.authorizationCodeGrant(post, back, c);
    expect(tokens.claims()).toMatchObject(bob);
    expect(tokens.claims()?.amr).toBeUndefined();
    op.nextAccount = 'alice';
  });

  it('accepts only the redirect URIs set once some are set', async () => {
    op.setRedirectUris(['http://127.0.0.1:9/elsewhere']);
    const url = authorizationUrl(config, await newChecks(), { scope: 'openid' });
    const refused = await fetch(url, { redirect: 'manual' });
    expect([refused.status, await refused.text()]).toEqual([400, expect.stringContaining('redirect_uri')]);
    op.setRedirectUris([]);
  });

  it('misbehaves: access_denied back at the callback, then HTML from the token endpoint', async () => {
    op.misbehave('error');
    let c = await newChecks();
    const denied = await followRedirect(authorizationUrl(config, c, { scope: 'openid' }));
    expect(Object.fromEntries(denied.searchParams)).toMatchObject({
      error: 'access_denied',
      state: c.expectedState,
      iss: op.url,
    });
    await expect(client.authorizationCodeGrant(config, denied, c)).rejects.toThrow(
      client.AuthorizationResponseError,
    );
    op.misbehave('garbage');
    c = await newChecks();
    const back = await followRedirect(authorizationUrl(config, c, { scope: 'openid' }));
    const answer = await fetch(`${op.url}/token`, {
      method: 'POST',
      body: new URLSearchParams({ code: 'x' }),
    });
    expect([answer.status, answer.headers.get('content-type'), await answer.text()]).toEqual([
      200,
      'text/html; charset=utf-8',
      '<html>oops</html>',
    ]);
    await expect(client.authorizationCodeGrant(config, back, c)).rejects.toMatchObject(NOT_JSON);
    op.misbehave(null);
  });
});

describe('the GitHub stand-in', () => {
  let gh: GithubStandIn;
  let config: client.Configuration;
  const octocat = {
    id: 583231,
    login: 'octocat',
    name: 'The Octocat',
    email: null,
    emails: [
      { email: 'octo@example.test', primary: true, verified: true },
      { email: 'old@example.test', primary: false, verified: false },
    ],
  };
  const scope = 'read:user user:email';
  const grant = (back: URL, c: FlowChecks) =>
    client.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: c.pkceCodeVerifier,
      expectedState: c.expectedState,
    });
  beforeAll(async () => {
    gh = await startGithubStandIn({ clientId: 'gh-id', clientSecret: 'gh-secret', accounts: { octocat } });
    config = githubConfiguration(gh.url, 'gh-id', 'gh-secret');
  });
  afterAll(() => gh.stop());

  it('walks the OAuth web flow with PKCE, then answers /user and /user/emails', async () => {
    const c = await newChecks();
    const back = await followRedirect(authorizationUrl(config, c, { scope, nonce: false }));
    expect(back.searchParams.get('state')).toBe(c.expectedState);
    const tokens = await grant(back, c);
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read:user,user:email' });
    const get = async (path: string) => {
      const url = new URL(`${gh.url}${path}`);
      return (await client.fetchProtectedResource(config, tokens.access_token, url, 'GET')).json();
    };
    expect(await get('/user')).toMatchObject({
      id: 583231,
      login: 'octocat',
      name: 'The Octocat',
      email: null,
    });
    expect(await get('/user/emails')).toEqual([
      { ...octocat.emails[0], visibility: 'private' },
      { ...octocat.emails[1], visibility: null },
    ]);
    expect(gh.requests.find((each) => each.path === '/login/oauth/authorize')?.params).toMatchObject({
      code_challenge: c.challenge,
      code_challenge_method: 'S256',
    });
  });

  it('answers a wrong verifier, then the spent code, as GitHub does: 200 with bad_verification_code', async () => {
    const c = await newChecks();
    const back = await followRedirect(authorizationUrl(config, c, { scope, nonce: false }));
    const exchange = async (code_verifier: string) => {
      const body = new URLSearchParams({
        client_id: 'gh-id',
        client_secret: 'gh-secret',
        code: back.searchParams.get('code') ?? '',
        redirect_uri: DEFAULT_CALLBACK,
        code_verifier,
      });
      const url = `${gh.url}/login/oauth/access_token`;
      const answer = await fetch(url, { method: 'POST', body, headers: { accept: 'application/json' } });
      return [answer.status, await answer.json()];
    };
    const badCode = [200, expect.objectContaining({ error: 'bad_verification_code' })];
    expect(await exchange('wrong-verifier-wrong-verifier-wrong-verifier')).toEqual(badCode);
    expect(await exchange(c.pkceCodeVerifier)).toEqual(badCode);
  });

  it('misbehaves: access_denied back at the callback, then HTML from the token endpoint', async () => {
    gh.misbehave('error');
    let c = await newChecks();
    const denied = await followRedirect(authorizationUrl(config, c, { scope, nonce: false }));
    expect(Object.fromEntries(denied.searchParams)).toMatchObject({
      error: 'access_denied',
      state: c.expectedState,
    });
    gh.misbehave('garbage');
    c = await newChecks();
    const back = await followRedirect(authorizationUrl(config, c, { scope, nonce: false }));
    await expect(grant(back, c)).rejects.toMatchObject(NOT_JSON);
    gh.misbehave(null);
  });
});

describe('the Apple stand-in', () => {
  let apple: AppleStandIn;
  let config: client.Configuration;
  const ann = { sub: '001234.abcd', email: 'x7@privaterelay.appleid.com', firstName: 'Ann', lastName: 'Lee' };
  const configure = async (secret: string) =>
    discover(apple.url, apple.clientId, client.ClientSecretPost(secret));
  const formPost = (c: FlowChecks) =>
    followFormPost(
      authorizationUrl(config, c, { scope: 'openid name email', extra: { response_mode: 'form_post' } }),
    );
  beforeAll(async () => {
    apple = await startAppleStandIn({ accounts: { ann } });
    config = await configure(await appleClientSecret(apple));
  });
  afterAll(() => apple.stop());

  it('posts code, state and, the first time only, user; the id_token is Apple-shaped', async () => {
    const c = await newChecks();
    const first = await formPost(c);
    expect(first.html).toContain('document.forms[0].submit()');
    expect(JSON.parse(first.fields.user ?? '')).toEqual({
      name: { firstName: 'Ann', lastName: 'Lee' },
      email: ann.email,
    });
    const tokens = await client.authorizationCodeGrant(config, first.request, c);
    expect(tokens.claims()).toMatchObject({
      iss: apple.url,
      aud: apple.clientId,
      sub: ann.sub,
      nonce: c.expectedNonce,
      email: ann.email,
      email_verified: 'true',
      is_private_email: 'true',
    });
    expect(tokens).toMatchObject({
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: expect.any(String),
    });
    const again = await newChecks();
    const second = await formPost(again);
    expect(second.fields.user).toBeUndefined();
    expect((await client.authorizationCodeGrant(config, second.request, again)).claims()?.sub).toBe(ann.sub);
  });

  it('refuses name or email without form_post, and a client secret Apple would refuse', async () => {
    const url = authorizationUrl(config, await newChecks(), { scope: 'openid email' });
    const query = await fetch(url, { redirect: 'manual' });
    expect([query.status, await query.text()]).toEqual([400, expect.stringContaining('invalid_request')]);
    const secrets = [
      await appleClientSecret(apple, { kid: 'OTHERKEY00' }),
      await appleClientSecret(apple, { lifetimeSeconds: 200 * 86_400 }),
      'not-a-jwt',
    ];
    for (const secret of secrets) {
      const c = await newChecks();
      const { request } = await formPost(c);
      await expect(client.authorizationCodeGrant(await configure(secret), request, c)).rejects.toMatchObject({
        error: 'invalid_client',
      });
    }
  });

  it('misbehaves: a form post with access_denied, then HTML from the token endpoint', async () => {
    apple.misbehave('error');
    let c = await newChecks();
    expect((await formPost(c)).fields).toMatchObject({ error: 'access_denied', state: c.expectedState });
    apple.misbehave('garbage');
    c = await newChecks();
    const { request } = await formPost(c);
    await expect(client.authorizationCodeGrant(config, request, c)).rejects.toMatchObject(NOT_JSON);
    apple.misbehave(null);
  });
});

describe('stop()', () => {
  it('closes each stand-in port: connections are refused afterwards', async () => {
    const standIns = [
      await startOidcStandIn({ clientId: 'a', clientSecret: 'b', accounts: { x: { sub: 'x' } } }),
      await startGithubStandIn({ clientId: 'a', clientSecret: 'b', accounts: {} }),
      await startAppleStandIn({ accounts: {} }),
    ];
    for (const standIn of standIns) {
      expect((await fetch(`${standIn.url}/.well-known/openid-configuration`)).status).toBeLessThan(500);
      await standIn.stop();
      await expect(fetch(standIn.url)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
    }
  });
});
