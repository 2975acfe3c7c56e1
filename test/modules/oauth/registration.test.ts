import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableUser } from '../../../src/modules/accounts/accounts.service.js';
import { createRegistrationToken } from '../../../src/modules/developer-apps/registration-tokens.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { depsOf, makeUser } from '../../helpers/factories.js';
import { initialToken, METADATA, manage, type Registered, register } from './registration.fixture.js';

/*
 * RFC 7591 dynamic registration at POST /api/v1/oauth/register: only with an initial access token
 * (single or N uses, expiry), through the developer portal's checks, with RFC 7591 §3.2.2 errors.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { CLIENT_REGISTRATION: 'approval', DEVELOPER_APPS_PER_USER: '3' } });
});
afterAll(() => t.close());

const clientRow = (clientId: string) =>
  t.database.db.selectFrom('clients').selectAll().where('client_id', '=', clientId).executeTakeFirstOrThrow();
const usesLeft = async () =>
  (
    await t.database.db
      .selectFrom('registration_tokens')
      .select('uses_left')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
  ).uses_left;

describe('a registration', () => {
  it('answers 201 with the client, its secret once and its registration access token (RFC 7591 §3.2.1)', async () => {
    const user = await makeUser(t);
    const res = await register(t, await initialToken(t, { ownerUserId: user.id }), {
      ...METADATA,
      post_logout_redirect_uris: ['https://site.example/bye'],
      logo_uri: 'https://site.example/logo.png',
      id_token_signed_response_alg: 'ES256',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'openid profile',
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');
    const body = res.json() as Registered;
    expect(body).toEqual({
      client_id: expect.stringMatching(/^pk_/),
      client_secret: expect.stringMatching(/^sk_/),
      client_id_issued_at: Date.parse('2026-06-01T12:00:00Z') / 1000,
      client_secret_expires_at: 0,
      registration_access_token: expect.stringMatching(/^rat_[A-Za-z0-9_-]{43}$/),
      registration_client_uri: `http://localhost:3000/api/v1/oauth/register/${body.client_id}`,
      client_name: 'Example site',
      client_uri: 'https://site.example',
      redirect_uris: ['https://site.example/callback'],
      post_logout_redirect_uris: ['https://site.example/bye'],
      logo_uri: 'https://site.example/logo.png',
      id_token_signed_response_alg: 'ES256',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      dpop_bound_access_tokens: false,
      require_pushed_authorization_requests: false,
    });
    // Owned by the token's owner, registered through RFC 7591, awaiting an operator's review.
    const row = await clientRow(body.client_id);
    expect(row).toMatchObject({
      registered_via: 'registration',
      approved_at: null,
      deleted_at: null,
      wallet: false,
    });
    // Only hashes are stored.
    expect(row.registration_access_token_hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(row)).not.toContain(body.registration_access_token);
    const owners = await t.database.db
      .selectFrom('client_owners')
      .selectAll()
      .where('client_pk', '=', row.id)
      .execute();
    expect(owners).toEqual([expect.objectContaining({ user_id: user.id, role: 'owner' })]);
    const audit = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('subject', '=', `client:${body.client_id}`)
      .execute();
    expect(audit.map((event) => [event.actor, event.action])).toEqual([
      [`user:${user.id}`, 'client_created'],
    ]);
    expect(JSON.stringify(audit)).not.toContain(body.client_secret);
  });

  it('registers a public client (token_endpoint_auth_method none) without a secret', async () => {
    const res = await register(t, await initialToken(t), { ...METADATA, token_endpoint_auth_method: 'none' });
    expect(res.statusCode).toBe(201);
    const body = res.json() as Registered;
    expect(body.token_endpoint_auth_method).toBe('none');
    expect(body).not.toHaveProperty('client_secret');
    expect(body).not.toHaveProperty('client_secret_expires_at');
    expect((await clientRow(body.client_id)).is_public).toBe(true);
  });

  it('registers a client for the device grant when grant_types names it (RFC 8628 §3.4), and lists it back', async () => {
    const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
    const res = await register(t, await initialToken(t), {
      ...METADATA,
      grant_types: ['authorization_code', 'refresh_token', DEVICE],
    });
    expect(res.statusCode).toBe(201);
    const body = res.json() as Registered;
    expect(body.grant_types).toEqual(['authorization_code', 'refresh_token', DEVICE]);
    expect((await clientRow(body.client_id)).device_grant).toBe(true);
    const read = await manage(t, 'GET', body.client_id, body.registration_access_token);
    expect(read.json().grant_types).toEqual(['authorization_code', 'refresh_token', DEVICE]);
    // RFC 7592 §2.2: metadata sent again without it replaces the registered grant types.
    const replaced = await manage(t, 'PUT', body.client_id, body.registration_access_token, {
      ...METADATA,
      client_id: body.client_id,
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json().grant_types).toEqual(['authorization_code', 'refresh_token']);
    expect((await clientRow(body.client_id)).device_grant).toBe(false);
    // A client registered without it may not use it.
    const plain = (await register(t, await initialToken(t))).json() as Registered;
    expect((await clientRow(plain.client_id)).device_grant).toBe(false);
  });

  it("registers with an operator's token without an owner, unapproved too", async () => {
    const res = await register(t, await initialToken(t), { ...METADATA, client_name: undefined });
    expect(res.statusCode).toBe(201);
    const body = res.json() as Registered;
    expect(body.client_name).toBe('site.example');
    const row = await clientRow(body.client_id);
    expect(row.approved_at).toBeNull();
    expect(
      await t.database.db.selectFrom('client_owners').selectAll().where('client_pk', '=', row.id).execute(),
    ).toEqual([]);
  });
});

describe('the initial access token', () => {
  it('is required: without one, 401 unauthorized with a bare Bearer challenge (RFC 6750 §3.1)', async () => {
    const res = await register(t, null);
    expectApiError(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="idp"');
    expectApiError(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/oauth/register',
        headers: { authorization: 'Basic eDp5', 'content-type': 'application/json' },
        payload: JSON.stringify(METADATA),
      }),
      401,
      'unauthorized',
    );
  });

  it.each(['rit_unknown', 'at_someone-elses-access-token', 'x'.repeat(500)])(
    'is refused when unknown: %s',
    async (token) => {
      expectApiError(await register(t, token), 401, 'invalid_token');
    },
  );

  it('is single use by default', async () => {
    const token = await initialToken(t);
    expect((await register(t, token)).statusCode).toBe(201);
    expect(await usesLeft()).toBe(0);
    expectApiError(await register(t, token), 401, 'invalid_token');
  });

  it('registers N clients with N uses', async () => {
    const token = await initialToken(t, { uses: 3 });
    for (let i = 0; i < 3; i++) expect((await register(t, token)).statusCode).toBe(201);
    expectApiError(await register(t, token), 401, 'invalid_token');
  });

  it('stops at its expiry', async () => {
    const token = await initialToken(t, { uses: 2, expiresInSeconds: 60 });
    t.clock.advance(61_000);
    try {
      expectApiError(await register(t, token), 401, 'invalid_token');
    } finally {
      t.clock.advance(-61_000);
    }
    expect(await usesLeft()).toBe(2);
  });

  it('spends no use on a refused registration', async () => {
    const token = await initialToken(t);
    expectApiError(
      await register(t, token, { ...METADATA, client_uri: 'http://site.example' }),
      400,
      'invalid_client_metadata',
    );
    expectApiError(
      await register(t, token, { ...METADATA, grant_types: ['implicit'] }),
      400,
      'invalid_client_metadata',
    );
    expect(await usesLeft()).toBe(1);
    expect((await register(t, token)).statusCode).toBe(201);
  });

  it("stops working when its owner's account is disabled", async () => {
    const user = await makeUser(t);
    const token = await initialToken(t, { ownerUserId: user.id });
    await disableUser(t.database.db, depsOf(t).ctx, { username: user.username });
    expectApiError(await register(t, token), 401, 'invalid_token');
    expect(await usesLeft()).toBe(1);
  });

  it("counts the owner's applications (DEVELOPER_APPS_PER_USER) and spends no use past the limit", async () => {
    const user = await makeUser(t);
    const token = await initialToken(t, { ownerUserId: user.id, uses: 5 });
    for (let i = 0; i < 3; i++) expect((await register(t, token)).statusCode).toBe(201);
    expectApiError(await register(t, token), 403, 'access_denied');
    expect(await usesLeft()).toBe(2);
  });
});

describe('refused metadata (RFC 7591 §3.2.2), in the contract error shape', () => {
  let token: string;
  beforeAll(async () => {
    token = await initialToken(t, { uses: 100 });
  });

  it.each([
    [
      'an http redirect URI on a public host',
      { redirect_uris: ['http://site.example/cb'] },
      /redirect_uris: /,
    ],
    ['no redirect URI', { redirect_uris: [] }, /redirect_uris is required/],
    ['a redirect URI with a fragment', { redirect_uris: ['https://site.example/cb#x'] }, /redirect_uris: /],
    ['a custom scheme for an https site', { redirect_uris: ['com.example.app:/cb'] }, /redirect_uris: /],
  ])('invalid_redirect_uri for %s', async (_name, change, description) => {
    const res = await register(t, token, { ...METADATA, ...change });
    expectApiError(res, 400, 'invalid_redirect_uri');
    expect(res.json().error_description).toMatch(description);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it.each([
    ['no client_uri', { client_uri: undefined }, /client_uri is required here/],
    ['an http site', { client_uri: 'http://site.example' }, /^client_uri: /],
    ['an empty name', { client_name: ' ' }, /^client_name: /],
    ['a long name', { client_name: 'n'.repeat(101) }, /^client_name: /],
    ['an unknown algorithm', { id_token_signed_response_alg: 'HS256' }, /^id_token_signed_response_alg: /],
    ['an http logo', { logo_uri: 'http://site.example/logo.png' }, /^logo_uri: /],
    [
      'a bad back-channel URI',
      { backchannel_logout_uri: 'ftp://site.example/bc' },
      /^backchannel_logout_uri: /,
    ],
    ['a bad post-logout URI', { post_logout_redirect_uris: ['nope'] }, /^post_logout_redirect_uris: /],
    ['client_credentials', { grant_types: ['client_credentials'] }, /grant_types/],
    ['response type token', { response_types: ['token'] }, /response_types/],
    ['private_key_jwt', { token_endpoint_auth_method: 'private_key_jwt' }, /token_endpoint_auth_method/],
    ['the wallet scope', { scope: 'openid wallet' }, /wallet/],
    ['the wallet right', { wallet: true }, /wallet/],
    ['the official mobile app', { official_mobile: true }, /official_mobile/],
    ['a number for a name', { client_name: 7 }, /client_name must be a string/],
    [
      'a huge redirect URI list',
      { redirect_uris: Array(5000).fill('https://site.example/cb') },
      /at most 20/,
    ],
  ])('invalid_client_metadata for %s', async (_name, change, description) => {
    const res = await register(t, token, { ...METADATA, ...change });
    if (_name === 'a huge redirect URI list') expectApiError(res, 400, 'invalid_redirect_uri');
    else expectApiError(res, 400, 'invalid_client_metadata');
    expect(res.json().error_description).toMatch(description);
  });

  it.each([
    ['a JSON array', '[]', 'application/json'],
    ['JSON null', 'null', 'application/json'],
    ['a form', 'client_uri=https%3A%2F%2Fsite.example', 'application/x-www-form-urlencoded'],
  ])('invalid_client_metadata for %s', async (_name, payload, type) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/register',
      headers: { authorization: `Bearer ${token}`, 'content-type': type },
      payload,
    });
    expectApiError(res, 400, 'invalid_client_metadata');
  });

  it('answers a body over 1 MiB with 413 and broken JSON with 400, never a 5xx', async () => {
    const huge = await register(t, token, { ...METADATA, client_name: 'x'.repeat(1_100_000) });
    expectApiError(huge, 413, 'payload_too_large');
    const broken = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/register',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: '{"redirect_uris": [',
    });
    expect(broken.statusCode).toBe(400);
    const nul = await register(t, token, { ...METADATA, client_name: 'a\u0000b' });
    expect(nul.statusCode).toBe(400);
  });

  it('refuses nothing before the token: a wrong token with bad metadata is 401', async () => {
    expectApiError(await register(t, 'rit_nope', { redirect_uris: 5 }), 401, 'invalid_token');
  });
});

describe('CLIENT_REGISTRATION', () => {
  it('closed: 403 access_denied, with or without a token, and no use spent', async () => {
    const closed = await createTestApp({ env: { CLIENT_REGISTRATION: 'closed' } });
    try {
      const { token } = await createRegistrationToken(closed.database.db, depsOf(closed).ctx, {
        ownerUserId: null,
        createdBy: 'cli',
      });
      for (const sent of [token, null]) {
        const res = await register(closed, sent);
        expectApiError(res, 403, 'access_denied');
        expect(res.json().error_description).toMatch(/closed/);
      }
      const row = await closed.database.db
        .selectFrom('registration_tokens')
        .select('uses_left')
        .executeTakeFirstOrThrow();
      expect(row.uses_left).toBe(1);
    } finally {
      await closed.close();
    }
  }, 120_000);

  it('open: registered unapproved too (the consent page marks it until an operator approves it)', async () => {
    const open = await createTestApp({ env: { CLIENT_REGISTRATION: 'open' } });
    try {
      const res = await register(open, await initialToken(open));
      expect(res.statusCode).toBe(201);
      const row = await open.database.db
        .selectFrom('clients')
        .select('approved_at')
        .where('client_id', '=', (res.json() as Registered).client_id)
        .executeTakeFirstOrThrow();
      expect(row.approved_at).toBeNull();
    } finally {
      await open.close();
    }
  }, 120_000);
});
