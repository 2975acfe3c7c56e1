import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/lib/errors.js';
import { s256 } from '../../../src/lib/pkce.js';
import { recentRefusals, recordRefusal } from '../../../src/modules/client-activity/refusals.service.js';
import { findClientByClientId } from '../../../src/modules/clients/clients.repository.js';
import { createClient } from '../../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser } from '../../helpers/browser.js';
import {
  depsOf,
  makeClient,
  makeUser,
  mintCode,
  type TestClient,
  type TestUser,
} from '../../helpers/factories.js';
import { authorizeUrl, basic, exchangeCode, postForm } from '../../helpers/http.js';

/*
 * The refused-request log an application's owners read: each refusal at authorize, PAR, the token,
 * revocation and introspection endpoints of a known client, with its reason and the values it is
 * about (never a secret, a code or a token), the latest 100, written at a bounded rate.
 */

let t: TestApp;
let user: TestUser;
/** Every secret, code, verifier and token sent in this file: none may be in the log. */
const sentSecrets: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  user = await makeUser(t);
});
afterAll(() => t.close());

// The write rate is bounded per client_id and in total by the clock: each test starts refilled.
beforeEach(() => t.clock.advance(60_000));

async function app(options: Parameters<typeof makeClient>[1] = {}): Promise<TestClient & { pk: number }> {
  const client = await makeClient(t, options);
  sentSecrets.push(client.clientSecret);
  const row = await findClientByClientId(t.database.db, client.clientId);
  return { ...client, pk: row?.id as number };
}

async function publicApp(): Promise<TestClient & { pk: number }> {
  const created = await createClient(t.database.db, depsOf(t).ctx, {
    name: 'Phone app',
    siteUrl: 'https://app.example',
    redirectUris: ['https://app.example/cb'],
    isPublic: true,
  });
  const row = await findClientByClientId(t.database.db, created.client_id);
  return {
    clientId: created.client_id,
    clientSecret: '',
    redirectUri: 'https://app.example/cb',
    pk: row?.id as number,
  };
}

/** The application's log once the writes started after the answers are done. */
async function logOf(client: { pk: number }) {
  await t.app.afterResponse.idle();
  return recentRefusals(t.database.db, client.pk);
}

/** A request, and its log write done: on PostgreSQL writes started together may commit in any order. */
async function settled<T>(request: Promise<T>): Promise<T> {
  const answer = await request;
  await t.app.afterResponse.idle();
  return answer;
}

const get = (url: string) => settled(t.app.inject({ method: 'GET', url }));
const exchange = (...args: Parameters<typeof exchangeCode>) => settled(exchangeCode(...args));
const post = (...args: Parameters<typeof postForm>) => settled(postForm(...args));

describe('at authorize', () => {
  it('a redirect_uri differing by a trailing slash shows the value received and the registered ones', async () => {
    const client = await app();
    const res = await get(authorizeUrl({ ...client, redirectUri: `${client.redirectUri}/` }));
    expect(res.statusCode).toBe(400);
    const [row] = await logOf(client);
    expect(row).toMatchObject({
      endpoint: 'authorize',
      error: 'invalid_request',
      reason: 'The redirect_uri is not registered for this application.',
      received: {
        redirect_uri: 'https://site.example/callback/',
        registered_redirect_uris: ['https://site.example/callback', 'http://127.0.0.1:8080/cb'],
        response_type: 'code',
      },
    });
  });

  it('logs response_type, scope, PKCE and PAR refusals with the values they are about', async () => {
    const client = await app();
    await get(authorizeUrl(client, { response_type: 'token' }));
    await get(authorizeUrl(client, { scope: 'openid telepathy' }));
    await get(authorizeUrl(client, { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }));
    const rows = await logOf(client);
    expect(rows.map(({ error, received }) => [error, received])).toEqual([
      [
        'invalid_request',
        { ...base(client), code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' },
      ],
      ['invalid_scope', { ...base(client), scope: 'openid telepathy' }],
      ['unsupported_response_type', { ...base(client), response_type: 'token' }],
    ]);
    expect(rows[0]?.reason).toBe('code_challenge_method must be S256 (plain is not supported).');

    const phone = await publicApp();
    await get(authorizeUrl(phone, { scope: 'openid' }));
    expect((await logOf(phone))[0]).toMatchObject({
      error: 'invalid_request',
      reason: 'code_challenge is required: a public client must use PKCE (S256).',
    });

    const pushedOnly = await app({ requirePar: true });
    await get(authorizeUrl(pushedOnly, { scope: 'openid' }));
    expect((await logOf(pushedOnly))[0]?.reason).toMatch(/must use pushed authorization requests/);
  });

  it('keeps nothing for a client_id nobody registered, nor for the user saying no', async () => {
    const before = await t.database.db
      .selectFrom('client_refusals')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    const res = await get(authorizeUrl({ clientId: 'pk_nobody', redirectUri: 'https://x.example/cb' }));
    expect(res.statusCode).toBe(400);
    await t.app.afterResponse.idle();
    const after = await t.database.db
      .selectFrom('client_refusals')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    expect(Number(after?.n)).toBe(Number(before?.n));
    const client = await app();
    // prompt=none without a session: login_required is the user's state, not the app's mistake.
    const silent = await get(authorizeUrl(client, { scope: 'openid', prompt: 'none' }));
    expect(silent.headers.location).toContain('error=login_required');
    expect(await logOf(client)).toEqual([]);
  });
});

describe('an application awaiting review', () => {
  it("logs that a user who is not an owner was refused, in the owners' words, and not who", async () => {
    const client = await app();
    await t.database.db
      .updateTable('clients')
      .set({ approved_at: null })
      .where('id', '=', client.pk)
      .execute();
    await t.sync();
    const browser = new Browser(t.app);
    const start = await browser.get(authorizeUrl(client, { scope: 'openid' }));
    const resume = (await browser.signIn(user, start.headers.location as string)).headers.location as string;
    expect((await browser.get(resume)).statusCode).toBe(403);
    const rows = await logOf(client);
    expect(rows.map(({ error, reason }) => [error, reason])).toEqual([
      [
        'app_awaits_review',
        "The application awaits an operator's review: until it is approved, only its owners and co-owners can sign in through it.",
      ],
    ]);
    expect(JSON.stringify(rows)).not.toContain(user.username);
  });
});

const base = (client: TestClient) => ({ redirect_uri: client.redirectUri, response_type: 'code' });

describe('at the token endpoint', () => {
  it('says why a code was refused: expired, used, another redirect_uri, a wrong verifier', async () => {
    const client = await app();
    const expired = await mintCode(t, client, user);
    t.clock.advance(11 * 60_000);
    await exchange(t.app, client, expired);
    const used = await mintCode(t, client, user);
    expect((await exchange(t.app, client, used)).statusCode).toBe(200);
    t.clock.advance(1_000);
    await exchange(t.app, client, used);
    const elsewhere = await mintCode(t, client, user);
    t.clock.advance(1_000);
    await exchange(t.app, client, elsewhere, { redirect_uri: 'https://site.example/callback/' });
    const verifier = 'a-code-verifier-of-at-least-forty-three-characters-0123456789';
    const pkce = await mintCode(t, client, user, { codeChallenge: s256(verifier) });
    t.clock.advance(1_000);
    const wrongVerifier = `${verifier.slice(0, -1)}x`;
    await exchange(t.app, client, pkce, { code_verifier: wrongVerifier });
    sentSecrets.push(expired, used, elsewhere, pkce, verifier, wrongVerifier);

    const rows = await logOf(client);
    expect(rows.map((row) => row.reason)).toEqual([
      'code_verifier does not match.',
      'redirect_uri differs from the one sent to authorize.',
      'The code was already used; the tokens issued from it are revoked.',
      'The code has expired.',
    ]);
    expect(rows.every((row) => row.endpoint === 'token' && row.error === 'invalid_grant')).toBe(true);
    expect(rows[1]?.received).toEqual({
      grant_type: 'authorization_code',
      redirect_uri: 'https://site.example/callback/',
      authorize_redirect_uri: 'https://site.example/callback',
      client_authentication: 'client_secret_basic',
    });
  });

  it('logs a wrong secret of a known client, an unsupported grant type and a missing DPoP proof', async () => {
    const client = await app();
    const wrong = { ...client, clientSecret: 'cs_not_the_secret_at_all' };
    sentSecrets.push(wrong.clientSecret);
    expect((await exchange(t.app, wrong, 'c_some_code')).statusCode).toBe(401);
    t.clock.advance(1_000);
    await post(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'password', username: 'a', password: 'b' },
      {
        authorization: basic(client),
      },
    );
    const rows = await logOf(client);
    expect(rows.map(({ error, reason, received }) => ({ error, reason, received }))).toEqual([
      {
        error: 'unsupported_grant_type',
        reason:
          'This grant_type is not supported; use one of: authorization_code, refresh_token, urn:ietf:params:oauth:grant-type:device_code.',
        received: { grant_type: 'password', client_authentication: 'client_secret_basic' },
      },
      {
        error: 'invalid_client',
        reason: expect.stringMatching(/client secret is wrong, expired or revoked/),
        received: {
          grant_type: 'authorization_code',
          redirect_uri: client.redirectUri,
          client_authentication: 'client_secret_basic',
        },
      },
    ]);

    const bound = await createClient(t.database.db, depsOf(t).ctx, {
      name: 'Bound',
      siteUrl: 'https://bound.example',
      redirectUris: ['https://bound.example/cb'],
      requireDpop: true,
    });
    const boundClient = {
      clientId: bound.client_id,
      clientSecret: bound.client_secret,
      redirectUri: 'https://bound.example/cb',
    };
    sentSecrets.push(bound.client_secret);
    const boundCode = await mintCode(t, boundClient, user);
    sentSecrets.push(boundCode);
    await exchange(t.app, boundClient, boundCode);
    t.clock.advance(1_000);
    await exchange(t.app, boundClient, boundCode);
    const boundRows = await logOf({
      pk: (await findClientByClientId(t.database.db, bound.client_id))?.id as number,
    });
    expect(boundRows[0]?.reason).toMatch(/must send a DPoP proof/);
    const garbled = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(boundClient),
        dpop: 'not.a.jwt',
      },
      payload: `grant_type=authorization_code&code=${boundCode}&redirect_uri=${encodeURIComponent(boundClient.redirectUri)}`,
    });
    expect(garbled.json().error).toBe('invalid_dpop_proof');
    const afterProof = await logOf({
      pk: (await findClientByClientId(t.database.db, bound.client_id))?.id as number,
    });
    expect(afterProof[0]?.error).toBe('invalid_dpop_proof');
  });

  it('keeps nothing for an unknown client_id, nor for a deleted application', async () => {
    const client = await app();
    await t.database.db
      .updateTable('clients')
      .set({ deleted_at: t.clock.now() })
      .where('id', '=', client.pk)
      .execute();
    await t.sync();
    await exchange(t.app, client, 'c_whatever');
    await exchange(t.app, { ...client, clientId: 'pk_unknown_here' }, 'c_whatever');
    expect(await logOf(client)).toEqual([]);
  });
});

describe('at PAR, revocation and introspection', () => {
  it('logs each with its endpoint', async () => {
    const client = await app();
    const auth = { authorization: basic(client) };
    await post(
      t.app,
      '/api/v1/oauth/par',
      { response_type: 'code', redirect_uri: client.redirectUri, state: 's', scope: 'nope' },
      auth,
    );
    t.clock.advance(1_000);
    const wrong = { authorization: basic({ ...client, clientSecret: 'cs_wrong_secret_for_revocation' }) };
    sentSecrets.push('cs_wrong_secret_for_revocation');
    await post(
      t.app,
      '/api/v1/oauth/revoke',
      { token: 'at_secret_token_value', token_type_hint: 'access_token' },
      wrong,
    );
    sentSecrets.push('at_secret_token_value');
    const phone = await publicApp();
    await post(t.app, '/api/v1/oauth/introspect', {
      client_id: phone.clientId,
      token: 'at_another_secret_token',
    });
    sentSecrets.push('at_another_secret_token');

    const rows = await logOf(client);
    expect(rows.map((row) => [row.endpoint, row.error])).toEqual([
      ['revocation', 'invalid_client'],
      ['par', 'invalid_scope'],
    ]);
    expect(rows[0]?.received).toEqual({
      token_type_hint: 'access_token',
      client_authentication: 'client_secret_basic',
    });
    expect(rows[1]?.received).toMatchObject({ scope: 'nope', redirect_uri: client.redirectUri });
    expect((await logOf(phone)).map((row) => [row.endpoint, row.error, row.reason])).toEqual([
      ['introspection', 'invalid_client', 'A public client (without a secret) cannot use this endpoint.'],
    ]);
  });
});

describe('the log', () => {
  it('never holds a secret, a code or a token sent in this file', async () => {
    await t.app.afterResponse.idle();
    const rows = await t.database.db.selectFrom('client_refusals').selectAll().execute();
    expect(rows.length).toBeGreaterThan(10);
    const text = JSON.stringify(rows);
    for (const secret of sentSecrets.filter((each) => each.length > 0)) expect(text).not.toContain(secret);
  });

  it("keeps the latest 100 of an application, newest first, and never another application's", async () => {
    const client = await app();
    const other = await app();
    const ctx = depsOf(t).ctx;
    const seen = (clientId: string) => ({
      endpoint: 'token' as const,
      clientId,
      params: { grant_type: 'x' },
    });
    for (let n = 0; n < 105; n++) {
      await recordRefusal(
        t.database.db,
        ctx,
        seen(client.clientId),
        new ApiError(400, 'invalid_grant', `number ${n}`),
        t.clock.now(),
      );
    }
    await recordRefusal(
      t.database.db,
      ctx,
      seen(other.clientId),
      new ApiError(400, 'invalid_grant', 'other'),
      t.clock.now(),
    );
    const rows = await recentRefusals(t.database.db, client.pk);
    expect(rows).toHaveLength(100);
    expect(rows[0]?.reason).toBe('number 104');
    expect(rows[99]?.reason).toBe('number 5');
    const stored = await t.database.db
      .selectFrom('client_refusals')
      .select('id')
      .where('client_pk', '=', client.pk)
      .execute();
    expect(stored).toHaveLength(100);
    expect((await recentRefusals(t.database.db, other.pk)).map((row) => row.reason)).toEqual(['other']);
    expect(await recentRefusals(t.database.db, client.pk, 3)).toHaveLength(3);
  });

  it('cuts a long value to 500 characters', async () => {
    const client = await app();
    await get(authorizeUrl(client, { scope: `openid ${'z'.repeat(1500)}` }));
    const [row] = await logOf(client);
    expect(row?.received.scope).toHaveLength(501);
  });

  it('cuts a value inside a surrogate pair without losing the row (jsonb refuses a lone half)', async () => {
    const client = await app();
    // "openid " and 492 letters: the emoji's two halves are characters 500 and 501.
    await get(authorizeUrl(client, { scope: `openid ${'z'.repeat(492)}\u{1F600}tail` }));
    const [row] = await logOf(client);
    expect(row?.received.scope).toBe(`openid ${'z'.repeat(492)}\uFFFD…`);
  });

  it('writes a few refusals a second per client_id, however many arrive', async () => {
    const client = await app();
    for (let n = 0; n < 30; n++) await get(authorizeUrl(client, { response_type: 'token' }));
    expect(await logOf(client)).toHaveLength(5);
    t.clock.advance(1_000);
    for (let n = 0; n < 30; n++) await get(authorizeUrl(client, { response_type: 'token' }));
    expect(await logOf(client)).toHaveLength(7);
  });
});
