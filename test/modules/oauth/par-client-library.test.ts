import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../../helpers/factories.js';

/*
 * A real client library against the app: oauth4webapi discovers the server, pushes the request
 * (RFC 9126), and, after the browser's sign-in and consent, redeems the code; its own response
 * checks (status 201, request_uri, expires_in, iss, state, nonce) pass unchanged.
 */

let t: TestApp;
let registered: TestClient;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  registered = await makeClient(t);
  user = await makeUser(t);
});
afterAll(() => t.close());

/** fetch for oauth4webapi, answered by app.inject: the issuer's URLs only. */
async function injectFetch(
  url: string,
  options: oauth.CustomFetchOptions<string, unknown>,
): Promise<Response> {
  const target = new URL(url);
  expect(target.origin).toBe(t.config.PUBLIC_URL);
  const res = await t.app.inject({
    method: options.method as 'GET' | 'POST',
    url: `${target.pathname}${target.search}`,
    headers: options.headers,
    ...(options.body === undefined ? {} : { payload: String(options.body) }),
  });
  return new Response(res.statusCode === 204 ? null : res.body, {
    status: res.statusCode,
    headers: Object.entries(res.headers).map(([name, value]) => [name, String(value)]),
  });
}

const transport = { [oauth.customFetch]: injectFetch, [oauth.allowInsecureRequests]: true };

describe('oauth4webapi', () => {
  it('pushes the request, accepts the 201 answer and completes the flow with its request_uri', async () => {
    const issuer = new URL(t.config.PUBLIC_URL);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, transport));
    expect(as.pushed_authorization_request_endpoint).toBe(`${t.config.PUBLIC_URL}/api/v1/oauth/par`);
    const client: oauth.Client = {
      client_id: registered.clientId,
      // The app runs on a fixed clock; the library checks the id_token's times against it.
      [oauth.clockSkew]: Math.round((t.clock.now().getTime() - Date.now()) / 1000),
    };
    const auth = oauth.ClientSecretBasic(registered.clientSecret);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();

    const pushed = await oauth.processPushedAuthorizationResponse(
      as,
      client,
      await oauth.pushedAuthorizationRequest(
        as,
        client,
        auth,
        {
          response_type: 'code',
          redirect_uri: registered.redirectUri,
          scope: 'openid profile',
          state,
          nonce,
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        },
        transport,
      ),
    );
    expect(pushed.expires_in).toBe(60);
    expect(pushed.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);

    const authorize = new URL(as.authorization_endpoint as string);
    authorize.searchParams.set('client_id', registered.clientId);
    authorize.searchParams.set('request_uri', pushed.request_uri);
    const browser = new Browser(t.app);
    const start = await browser.get(`${authorize.pathname}${authorize.search}`);
    const signedIn = await browser.signIn(user, start.headers.location as string);
    const page = await browser.get(signedIn.headers.location as string);
    const decided = await browser.post('/api/v1/oauth/authorize/decision', {
      ...hiddenFields(page.body, '/api/v1/oauth/authorize/decision'),
      decision: 'allow',
    });

    const callback = oauth.validateAuthResponse(
      as,
      client,
      new URL(decided.headers.location as string),
      state,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        callback,
        registered.redirectUri,
        verifier,
        transport,
      ),
      { expectedNonce: nonce, requireIdToken: true },
    );
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({
      iss: t.config.PUBLIC_URL,
      aud: registered.clientId,
      sub: String(user.id),
      nonce,
    });
  });

  it('reports a refused push as the server sent it', async () => {
    const issuer = new URL(t.config.PUBLIC_URL);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, transport));
    const client: oauth.Client = { client_id: registered.clientId };
    const response = await oauth.pushedAuthorizationRequest(
      as,
      client,
      oauth.ClientSecretBasic(registered.clientSecret),
      { response_type: 'code', redirect_uri: 'https://evil.example/cb', state: 's' },
      transport,
    );
    const refusal = await oauth
      .processPushedAuthorizationResponse(as, client, response)
      .catch((error) => error);
    expect(refusal).toBeInstanceOf(oauth.ResponseBodyError);
    expect(refusal).toMatchObject({ status: 400, error: 'invalid_request' });
  });
});
