import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { makeClient, makeUser, mintCode, type TestUser } from '../../helpers/factories.js';
import { exchangeCode } from '../../helpers/http.js';
import { initialToken, METADATA, manage, type Registered, register } from './registration.fixture.js';

/*
 * RFC 7592 management at /api/v1/oauth/register/{client_id} with the registration access token:
 * read, replace, delete; any other token, an unknown or a deleted client answer the same 401.
 */

let t: TestApp;
let owner: TestUser;
beforeAll(async () => {
  t = await createTestApp({ env: { DEVELOPER_CHANGES_PER_HOUR: '40' } });
  owner = await makeUser(t);
});
afterAll(() => t.close());

async function registered(
  body: unknown = METADATA,
  ownerUserId: number | null = owner.id,
): Promise<Registered> {
  const res = await register(t, await initialToken(t, { ownerUserId }), body);
  expect(res.statusCode).toBe(201);
  return res.json() as Registered;
}

describe('GET (RFC 7592 §2.1)', () => {
  it('answers the current metadata with the token, never the secret', async () => {
    const client = await registered();
    const res = await manage(t, 'GET', client.client_id, client.registration_access_token);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { client_secret: _secret, ...expected } = client;
    expect(res.json()).toEqual(expected);
  });
});

describe('the registration access token', () => {
  it('is required, and any other answers 401 invalid_token without saying whether the client exists', async () => {
    const client = await registered();
    const other = await registered();
    const operators = await makeClient(t);
    const deleted = await registered();
    expect((await manage(t, 'DELETE', deleted.client_id, deleted.registration_access_token)).statusCode).toBe(
      204,
    );
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const body = method === 'PUT' ? { ...METADATA, client_id: client.client_id } : undefined;
      const missing = await manage(t, method, client.client_id, null, body);
      expectApiError(missing, 401, 'unauthorized');
      const cases: Array<[string, string]> = [
        [client.client_id, other.registration_access_token],
        [client.client_id, 'rat_wrong'],
        [client.client_id, client.client_secret ?? ''],
        ['pk_unknown', client.registration_access_token],
        [operators.clientId, client.registration_access_token],
        [deleted.client_id, deleted.registration_access_token],
        ['x'.repeat(190), client.registration_access_token],
      ];
      const descriptions = new Set<string>();
      for (const [clientId, token] of cases) {
        const res = await manage(t, method, clientId, token, body);
        expectApiError(res, 401, 'invalid_token');
        descriptions.add(res.json().error_description);
      }
      expect(descriptions.size).toBe(1);
    }
    // Nothing changed: the client still reads as registered.
    expect((await manage(t, 'GET', client.client_id, client.registration_access_token)).statusCode).toBe(200);
  });
});

describe('PUT (RFC 7592 §2.2)', () => {
  it('replaces the metadata: what is left out is removed or back to its default; the token stays', async () => {
    // An owner of its own: the per-address mail limit has not been reached by earlier tests' mail.
    const mailed = await makeUser(t);
    const client = await registered(
      {
        ...METADATA,
        redirect_uris: ['https://site.example/a', 'https://site.example/b'],
        logo_uri: 'https://site.example/logo.png',
        id_token_signed_response_alg: 'ES256',
        require_pushed_authorization_requests: true,
      },
      mailed.id,
    );
    const ownerMails = () =>
      t.database.db
        .selectFrom('mail_outbox')
        .select('text_body')
        .where('recipient', '=', `${mailed.username}@example.com`)
        .orderBy('id')
        .execute();
    const mailsBefore = await ownerMails();
    const res = await manage(t, 'PUT', client.client_id, client.registration_access_token, {
      client_id: client.client_id,
      client_name: 'Renamed',
      client_uri: 'https://site.example',
      redirect_uris: ['https://site.example/b', 'https://site.example/c'],
      dpop_bound_access_tokens: true,
      // RFC 7592 §2.2: sent back by some clients; ignored.
      registration_access_token: 'rat_other',
      client_secret: 'sk_other',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      client_id: client.client_id,
      client_name: 'Renamed',
      redirect_uris: ['https://site.example/b', 'https://site.example/c'],
      id_token_signed_response_alg: 'RS256',
      require_pushed_authorization_requests: false,
      dpop_bound_access_tokens: true,
      registration_access_token: client.registration_access_token,
    });
    expect(res.json()).not.toHaveProperty('logo_uri');
    expect(res.json()).not.toHaveProperty('client_secret');
    const read = await manage(t, 'GET', client.client_id, client.registration_access_token);
    expect(read.json()).toEqual(res.json());
    // Audited as the owner's change and mailed to the owner, as a change in the portal is.
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select(['actor', 'action'])
      .where('subject', '=', `client:${client.client_id}`)
      .orderBy('id')
      .execute();
    expect(audit.map((event) => event.action)).toEqual(['client_created', 'client_updated']);
    expect(audit[1]?.actor).toBe(`user:${mailed.id}`);
    const mails = await ownerMails();
    expect(mails).toHaveLength(mailsBefore.length + 1);
    expect(mails.at(-1)?.text_body).toContain('changed its settings');
  });

  it('refuses what registration refuses, with the same errors, and changes nothing', async () => {
    const client = await registered();
    const put = (body: unknown) => manage(t, 'PUT', client.client_id, client.registration_access_token, body);
    const base = { ...METADATA, client_id: client.client_id };
    expectApiError(
      await put({ ...base, redirect_uris: ['http://site.example/cb'] }),
      400,
      'invalid_redirect_uri',
    );
    expectApiError(await put({ ...base, client_uri: undefined }), 400, 'invalid_client_metadata');
    expectApiError(
      await put({ ...base, grant_types: ['client_credentials'] }),
      400,
      'invalid_client_metadata',
    );
    expectApiError(await put({ ...base, wallet: true }), 400, 'invalid_client_metadata');
    expectApiError(await put([]), 400, 'invalid_client_metadata');
    const noId = await put(METADATA);
    expectApiError(noId, 400, 'invalid_client_metadata');
    expect(noId.json().error_description).toMatch(/client_id/);
    expectApiError(await put({ ...base, client_id: 'pk_other' }), 400, 'invalid_client_metadata');
    const toPublic = await put({ ...base, token_endpoint_auth_method: 'none' });
    expectApiError(toPublic, 400, 'invalid_client_metadata');
    expect(toPublic.json().error_description).toMatch(/token_endpoint_auth_method/);
    const read = await manage(t, 'GET', client.client_id, client.registration_access_token);
    const { client_secret: _secret, ...unchanged } = client;
    expect(read.json()).toEqual(unchanged);
  });

  it("manages a client without an owner (an operator's token), audited as the registration's", async () => {
    const client = await registered(METADATA, null);
    const res = await manage(t, 'PUT', client.client_id, client.registration_access_token, {
      ...METADATA,
      client_id: client.client_id,
      client_name: 'Ownerless',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().client_name).toBe('Ownerless');
  });

  it("counts against the owner's changes per hour (DEVELOPER_CHANGES_PER_HOUR)", async () => {
    const busy = await makeUser(t);
    const client = await registered(METADATA, busy.id);
    let limited: Awaited<ReturnType<typeof manage>> | undefined;
    for (let i = 0; i < 45 && !limited; i++) {
      const res = await manage(t, 'PUT', client.client_id, client.registration_access_token, {
        ...METADATA,
        client_id: client.client_id,
        client_name: `Name ${i}`,
      });
      if (res.statusCode !== 200) limited = res;
    }
    expect(limited).toBeDefined();
    expectApiError(limited as NonNullable<typeof limited>, 429, 'rate_limited');
  });
});

describe('DELETE (RFC 7592 §2.3)', () => {
  it('answers 204, ends the client and its tokens, and the token manages nothing any more', async () => {
    const user = await makeUser(t);
    const client = await registered({ ...METADATA, redirect_uris: ['https://site.example/cb'] });
    const testClient = {
      clientId: client.client_id,
      clientSecret: client.client_secret ?? '',
      redirectUri: 'https://site.example/cb',
    };
    const tokens = await exchangeCode(t.app, testClient, await mintCode(t, testClient, user));
    expect(tokens.statusCode).toBe(200);
    const res = await manage(t, 'DELETE', client.client_id, client.registration_access_token);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const row = await t.database.db
      .selectFrom('clients')
      .select(['deleted_at', 'disabled_at'])
      .where('client_id', '=', client.client_id)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
    expect(row.disabled_at).not.toBeNull();
    const userinfo = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${(tokens.json() as { access_token: string }).access_token}` },
    });
    expectApiError(userinfo, 401, 'invalid_token');
    expectApiError(
      await manage(t, 'GET', client.client_id, client.registration_access_token),
      401,
      'invalid_token',
    );
    expectApiError(
      await manage(t, 'DELETE', client.client_id, client.registration_access_token),
      401,
      'invalid_token',
    );
  });

  it("deletes a client without an owner (an operator's token)", async () => {
    const client = await registered(METADATA, null);
    expect((await manage(t, 'DELETE', client.client_id, client.registration_access_token)).statusCode).toBe(
      204,
    );
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select(['actor', 'action'])
      .where('subject', '=', `client:${client.client_id}`)
      .orderBy('id')
      .execute();
    expect(audit.map((event) => event.action)).toEqual(['client_created', 'client_deleted']);
  });
});

describe('routing', () => {
  it('answers other methods with 405 and Allow', async () => {
    const res = await t.app.inject({ method: 'PATCH', url: '/api/v1/oauth/register/pk_x' });
    expectApiError(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD, PUT, DELETE');
    expectApiError(
      await t.app.inject({ method: 'GET', url: '/api/v1/oauth/register' }),
      405,
      'method_not_allowed',
    );
  });
});
