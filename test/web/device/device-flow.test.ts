import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableUser } from '../../../src/modules/accounts/accounts.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { dpopKey, dpopProof } from '../../helpers/dpop.js';
import { depsOf, makeClient, makeUser, type TestClient, type TestUser } from '../../helpers/factories.js';
import { basic, postForm } from '../../helpers/http.js';

/*
 * RFC 8628 end to end over app.inject: the device's request, every polling answer, the page where
 * a signed-in person types the code and allows or denies, and the tokens once.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
let t: TestApp;
let device: TestClient;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  device = await makeClient(t, { name: 'Arcade Console', deviceGrant: true });
  user = await makeUser(t);
});
afterAll(() => t?.close());

interface Authorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

async function authorize(scope = 'openid offline_access', client = device) {
  const res = await postForm(
    t.app,
    '/api/v1/oauth/device_authorization',
    { scope },
    {
      authorization: basic(client),
      'user-agent': 'ArcadeOS/2.1 (living room)',
    },
  );
  return res;
}

async function started(scope?: string): Promise<Authorization> {
  const res = await authorize(scope);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Authorization;
}

function poll(deviceCode: string, headers: Record<string, string> = {}) {
  return postForm(
    t.app,
    '/api/v1/oauth/token',
    { grant_type: GRANT, device_code: deviceCode },
    {
      authorization: basic(device),
      ...headers,
    },
  );
}

const errorOf = (res: { json(): unknown }) => (res.json() as { error: string }).error;

/** A signed-in browser allows (or denies) the request at /device, as a person does. */
async function decide(code: string, decision: 'allow' | 'deny', as = user): Promise<string> {
  const browser = new Browser(t.app);
  const start = await browser.get(`/device?user_code=${code}`);
  expect(start.statusCode).toBe(302);
  expect(start.headers.location).toBe(`/signin?return_to=${encodeURIComponent(`/device?user_code=${code}`)}`);
  const signedIn = await browser.signIn(as, start.headers.location as string);
  const page = await browser.get(signedIn.headers.location as string);
  expect(page.body).toContain(`value="${code}"`);
  const confirm = await browser.post('/device', {
    ...hiddenFields(page.body, '/device'),
    user_code: code.toLowerCase(),
  });
  expect(confirm.statusCode, confirm.body.slice(0, 400)).toBe(200);
  expect(confirm.body).toContain('Arcade Console wants to sign in on a device');
  expect(confirm.body).toContain('ArcadeOS/2.1 (living room)');
  const done = await browser.post('/device/decision', {
    ...hiddenFields(confirm.body, '/device/decision'),
    decision,
  });
  expect(done.statusCode).toBe(200);
  return done.body;
}

describe('the device authorization endpoint', () => {
  it('answers a device code, an easy user code, the verification URIs, 10 minutes and 5 seconds', async () => {
    const answer = await started();
    expect(answer.device_code).toMatch(/^dc_[A-Za-z0-9_-]{43}$/);
    expect(answer.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(answer).toMatchObject({
      verification_uri: `${t.config.PUBLIC_URL}/device`,
      verification_uri_complete: `${t.config.PUBLIC_URL}/device?user_code=${answer.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    const discovery = (
      await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })
    ).json();
    expect(discovery.device_authorization_endpoint).toBe(
      `${t.config.PUBLIC_URL}/api/v1/oauth/device_authorization`,
    );
    expect(discovery.grant_types_supported).toContain(GRANT);
    const catalogue = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json() as {
      routes: Array<{ method: string; path: string; auth: string }>;
    };
    expect(catalogue.routes).toContainEqual(
      expect.objectContaining({ method: 'POST', path: '/api/v1/oauth/device_authorization', auth: 'client' }),
    );
    expect(catalogue.routes).toContainEqual(expect.objectContaining({ method: 'GET', path: '/device' }));
  });

  it('refuses a client not registered for the grant, and unknown scopes', async () => {
    const site = await makeClient(t);
    const refused = await authorize('openid', site);
    expect(refused.statusCode).toBe(400);
    expect(errorOf(refused)).toBe('unauthorized_client');
    expect(errorOf(await authorize('openid games'))).toBe('invalid_scope');
  });
});

describe('polling', () => {
  it('answers authorization_pending, slow_down when too fast (the interval grows by 5 s), then the tokens once', async () => {
    const { device_code, user_code } = await started();
    const first = await poll(device_code);
    expect(first.statusCode).toBe(400);
    expect(errorOf(first)).toBe('authorization_pending');
    expect(first.headers['cache-control']).toBe('no-store');
    t.clock.advance(1000);
    const fast = await poll(device_code);
    expect(errorOf(fast)).toBe('slow_down');
    // Now 10 seconds: 6 later is still too fast, 10 later is not.
    t.clock.advance(6000);
    expect(errorOf(await poll(device_code))).toBe('slow_down');
    t.clock.advance(15_000);
    expect(errorOf(await poll(device_code))).toBe('authorization_pending');

    expect(await decide(user_code, 'allow')).toContain('Arcade Console is signed in on your device');
    t.clock.advance(20_000);
    const tokens = await poll(device_code);
    expect(tokens.statusCode, tokens.body).toBe(200);
    const body = tokens.json() as {
      access_token: string;
      refresh_token?: string;
      id_token: string;
      token_type: string;
    };
    expect(body.token_type).toBe('Bearer');
    expect(body.refresh_token).toMatch(/^rt_/);
    expect(decodeJwt(body.id_token)).toMatchObject({ sub: String(user.id), amr: ['pwd'] });
    const me = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${body.access_token}` },
    });
    expect(me.statusCode).toBe(200);
    // Redeemed once.
    t.clock.advance(20_000);
    expect(errorOf(await poll(device_code))).toBe('invalid_grant');
  });

  it('answers access_denied once the person denies, and expired_token after 10 minutes', async () => {
    const denied = await started();
    expect(await decide(denied.user_code, 'deny')).toContain('was not signed in on the device');
    expect(errorOf(await poll(denied.device_code))).toBe('access_denied');

    const late = await started();
    t.clock.advance(601_000);
    expect(errorOf(await poll(late.device_code))).toBe('expired_token');
    expect(errorOf(await poll('dc_unknown'))).toBe('invalid_grant');
  });

  it('binds the tokens to the DPoP key of a proof sent with the poll', async () => {
    const { device_code, user_code } = await started();
    await decide(user_code, 'allow');
    const key = await dpopKey();
    const res = await poll(device_code, { dpop: await dpopProof(t, key) });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { token_type: string }).token_type).toBe('DPoP');
  });

  it("ends with the app's revocation or the user's disabling, even once allowed", async () => {
    const revoked = await started();
    await decide(revoked.user_code, 'allow');
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const account = await browser.get('/account');
    const revoke = await browser.post('/account/apps/revoke', {
      ...hiddenFields(account.body, '/account/apps/revoke'),
      client_id: device.clientId,
    });
    expect(revoke.statusCode).toBe(303);
    t.clock.advance(20_000);
    expect((await poll(revoked.device_code)).statusCode).toBe(400);

    const other = await makeUser(t);
    const disabled = await started();
    await decide(disabled.user_code, 'allow', other);
    const { db, ctx } = depsOf(t);
    await disableUser(db, ctx, { username: other.username });
    t.clock.advance(20_000);
    const res = await poll(disabled.device_code);
    expect(res.statusCode).toBe(400);
    expect((res.json() as { access_token?: string }).access_token).toBeUndefined();
  });
});

describe('/device', () => {
  it('counts wrong codes in the account budget and then checks none', async () => {
    const browser = new Browser(t.app);
    const who = await makeUser(t);
    await browser.signIn(who, '/signin?return_to=%2Fdevice');
    const { user_code } = await started();
    let last = 0;
    for (let i = 0; i <= t.config.SIGN_IN_MAX_ATTEMPTS; i++) {
      const res = await browser.submit('/device', '/device', { user_code: 'BBBB-BBBB' });
      last = res.statusCode;
    }
    expect(last).toBe(429);
    // The decision's form takes the code through the same limits: no way around them.
    const entry = await browser.get('/device');
    const direct = await browser.post('/device/decision', {
      ...hiddenFields(entry.body, '/device'),
      user_code,
      decision: 'allow',
    });
    expect(direct.statusCode).toBe(429);
    // Past the budget even the right code is not looked up.
    const right = await browser.submit('/device', '/device', { user_code });
    expect(right.statusCode).toBe(429);
    expect(right.body).toContain('Too many wrong codes');
  });
});
