import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, hiddenFields } from '../helpers/browser.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../helpers/factories.js';
import { authorizeUrl, basic, postForm } from '../helpers/http.js';

/*
 * A client registered for the device grant (RFC 8628) without any redirect URI, as a TV's or a
 * command-line tool's: the device flow signs its person in, and the authorize endpoint, which it
 * never needs, answers any redirect_uri with the unregistered redirect_uri page.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
let t: TestApp;
let tv: TestClient;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  tv = await makeClient(t, { name: 'Lantern TV', redirectUris: [], deviceGrant: true });
  user = await makeUser(t);
});
afterAll(() => t?.close());

const poll = (deviceCode: string) =>
  postForm(
    t.app,
    '/api/v1/oauth/token',
    { grant_type: GRANT, device_code: deviceCode },
    { authorization: basic(tv) },
  );

describe('a device client without redirect URIs', () => {
  it('signs its person in through the device flow, with a refresh token', async () => {
    const started = await postForm(
      t.app,
      '/api/v1/oauth/device_authorization',
      { scope: 'openid offline_access' },
      { authorization: basic(tv), 'user-agent': 'LanternOS/1.0' },
    );
    expect(started.statusCode, started.body).toBe(200);
    const { device_code, user_code } = started.json() as { device_code: string; user_code: string };
    expect((await poll(device_code)).json()).toMatchObject({ error: 'authorization_pending' });

    const browser = new Browser(t.app);
    await browser.signIn(user, '/signin?return_to=%2Fdevice');
    const page = await browser.get(`/device?user_code=${user_code}`);
    const confirm = await browser.post('/device', { ...hiddenFields(page.body, '/device'), user_code });
    expect(confirm.statusCode, confirm.body.slice(0, 400)).toBe(200);
    expect(confirm.body).toContain('Lantern TV wants to sign in on a device');
    const done = await browser.post('/device/decision', {
      ...hiddenFields(confirm.body, '/device/decision'),
      decision: 'allow',
    });
    expect(done.statusCode).toBe(200);

    t.clock.advance(10_000);
    const tokens = await poll(device_code);
    expect(tokens.statusCode, tokens.body).toBe(200);
    const body = tokens.json() as { id_token: string; refresh_token: string };
    expect(decodeJwt(body.id_token)).toMatchObject({ sub: String(user.id), aud: tv.clientId });
    const refreshed = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'refresh_token', refresh_token: body.refresh_token },
      { authorization: basic(tv) },
    );
    expect(refreshed.statusCode, refreshed.body).toBe(200);
  });

  it('is answered the unregistered redirect_uri page at authorize, with no registered host to show', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: authorizeUrl({ clientId: tv.clientId, redirectUri: 'https://tv.example/cb' }),
      headers: { 'accept-language': 'en' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toContain('The redirect_uri is not registered for this application.');
    expect(res.body).toContain('<code class="url">https://tv.example/cb</code>');
    expect(res.body).not.toContain('The addresses registered for this app are on:');
    // Pushed (RFC 9126) as well: the same refusal, in JSON.
    const pushed = await postForm(
      t.app,
      '/api/v1/oauth/par',
      {
        response_type: 'code',
        redirect_uri: 'https://tv.example/cb',
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      },
      { authorization: basic(tv) },
    );
    expect(pushed.statusCode, pushed.body).toBe(400);
    expect(pushed.json()).toMatchObject({ error: 'invalid_request' });
  });
});
