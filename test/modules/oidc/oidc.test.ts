import { createHash } from 'node:crypto';
import { createLocalJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../../src/modules/oauth/scopes.js';
import { discoveryDocument } from '../../../src/modules/oidc/discovery.js';
import { accessTokenHash, ID_TOKEN_TTL_SECONDS, signIdToken } from '../../../src/modules/oidc/id-token.js';
import { expectApiError } from '../../helpers/assertions.js';
import { USERINFO_CLAIMS } from '../../helpers/claims.js';
import { clientId, ctx, getJwks, ISSUER, setUpOidcApp, sign, t, user, verify } from './oidc.fixture.js';

setUpOidcApp();

describe('GET /.well-known/openid-configuration', () => {
  it('publishes the provider metadata under PUBLIC_URL, issuer exactly PUBLIC_URL', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    const body = res.json();
    expect(body).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/api/v1/oauth/authorize`,
      token_endpoint: `${ISSUER}/api/v1/oauth/token`,
      userinfo_endpoint: `${ISSUER}/api/v1/oauth/userinfo`,
      jwks_uri: `${ISSUER}/api/v1/oauth/jwks`,
      revocation_endpoint: `${ISSUER}/api/v1/oauth/revoke`,
      introspection_endpoint: `${ISSUER}/api/v1/oauth/introspect`,
      scopes_supported: ['openid', 'profile', 'email', 'verified', 'wallet', 'offline_access'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: [
        'authorization_code',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
      ],
      device_authorization_endpoint: `${ISSUER}/api/v1/oauth/device_authorization`,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA'],
      // `none`: a public client sends its client_id alone (RFC 7591 section 2).
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256'],
      prompt_values_supported: ['none', 'login', 'consent'],
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      claims_parameter_supported: false,
    });
    expect(body.scopes_supported).toEqual(ALL_SCOPES);
    for (const claim of [...USERINFO_CLAIMS, 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash']) {
      expect(body.claims_supported).toContain(claim);
    }
    expect(new Set(body.claims_supported).size).toBe(body.claims_supported.length);
  });

  it('keeps a path prefix of PUBLIC_URL in the issuer and every endpoint', () => {
    const document = discoveryDocument('https://example.com/idp');
    expect(document.issuer).toBe('https://example.com/idp');
    expect(document.jwks_uri).toBe('https://example.com/idp/api/v1/oauth/jwks');
    expect(document.token_endpoint).toBe('https://example.com/idp/api/v1/oauth/token');
  });

  it('is accepted by openid-client discovery unchanged', async () => {
    const injectFetch = async (url: string, options: client.CustomFetchOptions) => {
      const target = new URL(url);
      expect(target.origin).toBe(ISSUER);
      const res = await t.app.inject({
        method: options.method as 'GET',
        url: `${target.pathname}${target.search}`,
        headers: options.headers,
      });
      return new Response(res.body, {
        status: res.statusCode,
        headers: Object.entries(res.headers).map(([name, value]) => [name, String(value)]),
      });
    };
    const config = await client.discovery(new URL(ISSUER), clientId, 'sk_secret', undefined, {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: injectFetch,
    });
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(ISSUER);
    expect(metadata.supportsPKCE()).toBe(true);
    expect(metadata.jwks_uri).toBe(`${ISSUER}/api/v1/oauth/jwks`);
  });

  it('refuses other methods with 405', async () => {
    expectApiError(
      await t.app.inject({ method: 'POST', url: '/.well-known/openid-configuration' }),
      405,
      'method_not_allowed',
    );
  });
});

describe('id_token', () => {
  it('verifies against the JWKS and carries the protocol claims', async () => {
    t.clock.set('2026-06-01T12:00:00Z');
    const authTime = new Date('2026-06-01T11:58:20.750Z');
    const accessToken = 'at_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';
    const idToken = await sign({ nonce: 'n-0S6_WzA2Mj', authTime, accessToken });
    const { payload, protectedHeader } = await verify(idToken);
    const { keys } = await getJwks();
    expect(protectedHeader).toEqual({ alg: 'RS256', kid: keys[0]?.kid, typ: 'JWT' });
    const iat = Date.parse('2026-06-01T12:00:00Z') / 1000;
    expect(payload).toMatchObject({
      iss: ISSUER,
      sub: String(user.id),
      aud: clientId,
      iat,
      exp: iat + ID_TOKEN_TTL_SECONDS,
      auth_time: Math.floor(authTime.getTime() / 1000),
      nonce: 'n-0S6_WzA2Mj',
    });
    expect(ID_TOKEN_TTL_SECONDS).toBe(3600);
    // OIDC Core §3.1.3.6: base64url of the left half of SHA-256 over the ASCII token.
    const digest = createHash('sha256').update(accessToken).digest();
    expect(payload.at_hash).toBe(digest.subarray(0, 16).toString('base64url'));
    expect(payload.at_hash).toBe(accessTokenHash(accessToken));
    expect(payload.at_hash).toHaveLength(22);
  });

  it('leaves out nonce and at_hash when there are none', async () => {
    const { payload } = await verify(await sign());
    expect(payload).not.toHaveProperty('nonce');
    expect(payload).not.toHaveProperty('at_hash');
  });

  it('carries the profile claims of the granted scopes only', async () => {
    const all = (await verify(await sign())).payload;
    expect(all).toMatchObject({
      sub: String(user.id),
      id: user.id,
      preferred_username: 'oidc_alice',
      email: 'alice@example.com',
      email_verified: true,
      verification_level: 2,
    });
    const withoutEmail = (await verify(await sign({ scopes: ['openid', 'profile', 'verified'] }))).payload;
    expect(withoutEmail).not.toHaveProperty('email');
    expect(withoutEmail).not.toHaveProperty('email_verified');
    expect(withoutEmail).toMatchObject({ preferred_username: 'oidc_alice', verification_level: 2 });
    const openidOnly = (await verify(await sign({ scopes: ['openid'] }))).payload;
    expect(Object.keys(openidOnly).sort()).toEqual([
      'amr',
      'aud',
      'auth_time',
      'exp',
      'iat',
      'id',
      'iss',
      'sub',
    ]);
  });

  it('is refused once expired, and for another audience or issuer', async () => {
    const idToken = await sign();
    const jwks = createLocalJWKSet(await getJwks());
    const later = new Date(t.clock.now().getTime() + (ID_TOKEN_TTL_SECONDS + 1) * 1000);
    await expect(jwtVerify(idToken, jwks, { currentDate: later })).rejects.toBeInstanceOf(
      joseErrors.JWTExpired,
    );
    await expect(
      jwtVerify(idToken, jwks, { audience: 'pk_other', currentDate: t.clock.now() }),
    ).rejects.toBeInstanceOf(joseErrors.JWTClaimValidationFailed);
    await expect(
      jwtVerify(idToken, jwks, { issuer: `${ISSUER}/`, currentDate: t.clock.now() }),
    ).rejects.toBeInstanceOf(joseErrors.JWTClaimValidationFailed);
  });

  it('can be signed inside a transaction, with the key read in it', async () => {
    const idToken = await t.database.db.transaction().execute((trx) =>
      signIdToken(trx, ctx, {
        user,
        clientId,
        scopes: ['openid'],
        nonce: 'n',
        authTime: t.clock.now(),
        amr: ['pwd'],
      }),
    );
    const { payload } = await verify(idToken);
    expect(payload.nonce).toBe('n');
  });

  it('signs without re-reading the key table each time (the signer is cached)', async () => {
    await sign();
    const started = performance.now();
    const rounds = 50;
    for (let i = 0; i < rounds; i++) await sign();
    const perToken = (performance.now() - started) / rounds;
    // RS256 signs in well under a millisecond here; 25 ms would mean a query and a key import each time.
    expect(perToken).toBeLessThan(25);
  });
});
