import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUnacceptableText, isAcceptableText } from '../../src/http/input-guard.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import {
  makeClient,
  makeOfficialApp,
  makeUser,
  mintCode,
  type TestClient,
  type TestUser,
} from '../helpers/factories.js';
import { hiddenFields } from '../helpers/html.js';
import { basic, exchangeCode, postForm } from '../helpers/http.js';

const NUL = 'a\u0000b';
const LONE = 'a\ud800b';

let t: TestApp;
let client: TestClient;
let user: TestUser;
let mobileClientId: string;
let refreshToken: string;

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t);
  user = await makeUser(t);
  mobileClientId = (await makeOfficialApp(t)).clientId;
  const tokens = await exchangeCode(
    t.app,
    client,
    await mintCode(t, client, user, { scopes: ['openid', 'offline_access'] }),
  );
  refreshToken = (tokens.json() as { refresh_token: string }).refresh_token;
});
afterAll(() => t.close());

function expectErrorPage(res: LightMyRequestResponse): void {
  expect({ status: res.statusCode, location: res.headers.location }).toEqual({
    status: 400,
    location: undefined,
  });
  expect(res.headers['content-type']).toMatch(/^text\/html/);
}

describe('isAcceptableText', () => {
  it.each([
    ['', true],
    ['plain', true],
    ['é 漢 🙂', true],
    ['\u0000', false],
    [NUL, false],
    ['\ud800', false],
    ['\udfff', false],
    [LONE, false],
    ['\ud83d\ude42', true],
  ])('%j → %s', (value, acceptable) => {
    expect(isAcceptableText(value)).toBe(acceptable);
  });

  it('finds bad text in keys and nested values, and nothing in clean input', () => {
    expect(findUnacceptableText({ a: ['x', { b: NUL }] })).toEqual(['a', '1', 'b']);
    expect(findUnacceptableText({ [LONE]: 'x' })).toEqual([LONE]);
    expect(findUnacceptableText(NUL)).toEqual([]);
    expect(findUnacceptableText({ a: ['x', { b: 1, c: null, d: true }] })).toBeUndefined();
  });
});

describe('NUL and lone surrogates are refused with 400 invalid_request before any handler', () => {
  const authorizeQuery = (change: Record<string, string>) =>
    new URLSearchParams({
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      response_type: 'code',
      state: 'state-1',
      ...change,
    }).toString();

  it.each([
    ['client_id', { client_id: NUL }],
    ['state', { state: NUL }],
    ['nonce', { nonce: NUL }],
  ])('authorize %s: the error page, no redirect', async (_name, change) => {
    expectErrorPage(
      await t.app.inject({ method: 'GET', url: `/api/v1/oauth/authorize?${authorizeQuery(change)}` }),
    );
  });

  it('the sign-in form username: the error page', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/signin' });
    const res = await postForm(
      t.app,
      '/signin',
      { ...hiddenFields(page.body, '/signin'), username: NUL, password: 'x' },
      { cookie: page.cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ') },
    );
    expectErrorPage(res);
  });

  it('/account/apps/revoke client_id: the error page', async () => {
    expectErrorPage(await postForm(t.app, '/account/apps/revoke', { client_id: NUL, csrf_token: 'x' }));
  });

  const mobileBody = (route: string, change: Record<string, unknown>) => {
    const base: Record<string, Record<string, unknown>> = {
      challenge: { client_id: mobileClientId, device_id: 'device-12345678' },
      verify: {
        client_id: mobileClientId,
        device_id: 'device-12345678',
        challenge: 'c',
        signature: 's',
        public_key: 'k',
        username: user.username,
        password: user.password,
      },
      refresh: {
        client_id: mobileClientId,
        device_id: 'device-12345678',
        refresh_token: 'rt_x',
        challenge: 'c',
        signature: 's',
      },
      logout: { client_id: mobileClientId, device_id: 'device-12345678' },
    };
    return { ...base[route], ...change };
  };

  it.each(['challenge', 'verify', 'refresh', 'logout'])(
    'mobile %s: client_id with NUL or a lone surrogate',
    async (route) => {
      for (const bad of [NUL, LONE]) {
        const res = await t.app.inject({
          method: 'POST',
          url: `/api/v1/mobile/${route}`,
          headers: { authorization: 'Bearer at_x' },
          payload: mobileBody(route, { client_id: bad }),
        });
        expectApiError(res, 400, 'invalid_request');
      }
    },
  );

  it('mobile verify: username with NUL', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mobile/verify',
      payload: mobileBody('verify', { username: NUL }),
    });
    expectApiError(res, 400, 'invalid_request');
  });

  it.each(['token', 'revoke', 'introspect'])(
    '%s: client authentication with NUL, in Basic and in the body',
    async (endpoint) => {
      const url = `/api/v1/oauth/${endpoint}`;
      const params =
        endpoint === 'token' ? { grant_type: 'refresh_token', refresh_token: refreshToken } : { token: 'x' };
      const inBasic = `Basic ${Buffer.from(`${encodeURIComponent(NUL)}:secret`).toString('base64')}`;
      expectApiError(await postForm(t.app, url, params, { authorization: inBasic }), 400, 'invalid_request');
      const rawNulBasic = `Basic ${Buffer.from(`${client.clientId}\u0000:${client.clientSecret}`).toString('base64')}`;
      expectApiError(
        await postForm(t.app, url, params, { authorization: rawNulBasic }),
        400,
        'invalid_request',
      );
      expectApiError(
        await postForm(t.app, url, { ...params, client_id: NUL, client_secret: client.clientSecret }),
        400,
        'invalid_request',
      );
      expectApiError(
        await postForm(t.app, url, { ...params, client_id: client.clientId, client_secret: NUL }),
        400,
        'invalid_request',
      );
    },
  );

  it('token: redirect_uri and refresh scope with NUL', async () => {
    expectApiError(
      await postForm(
        t.app,
        '/api/v1/oauth/token',
        { grant_type: 'authorization_code', code: 'ac_x', redirect_uri: NUL },
        { authorization: basic(client) },
      ),
      400,
      'invalid_request',
    );
    expectApiError(
      await postForm(
        t.app,
        '/api/v1/oauth/token',
        { grant_type: 'refresh_token', refresh_token: refreshToken, scope: `openid ${NUL}` },
        { authorization: basic(client) },
      ),
      400,
      'invalid_request',
    );
  });

  it('revoke: token_type_hint with NUL writes no audit row', async () => {
    const before = await t.database.db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow();
    expectApiError(
      await postForm(
        t.app,
        '/api/v1/oauth/revoke',
        { token: 'x', token_type_hint: NUL },
        { authorization: basic(client) },
      ),
      400,
      'invalid_request',
    );
    const after = await t.database.db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow();
    expect(Number(after.count)).toBe(Number(before.count));
  });

  it('a lone surrogate in JSON is refused, not stored as U+FFFD', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/wallet/charge',
      headers: { authorization: 'Bearer at_x', 'content-type': 'application/json' },
      payload: '{"amount":1,"currency":"COIN","description":"a\\ud800b","idempotency_key":"k"}',
    });
    expectApiError(res, 400, 'invalid_request');
    expect(res.json().error_description).toMatch(
      /^body\.description contains a NUL character or text that is not well-formed/,
    );
  });

  it('a NUL in a parameter name is refused too', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/users/search?q=abc&x%00=1' });
    expectApiError(res, 400, 'invalid_request');
  });
});
