import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s256 } from '../../../src/lib/pkce.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser } from '../../helpers/browser.js';
import { makeClient, makeUser, type TestClient } from '../../helpers/factories.js';
import { authorizeUrl, basic, postForm } from '../../helpers/http.js';

/*
 * acr_values is a space-separated list in order of preference (OIDC Core §3.1.2.1); docs/oauth.md:
 * a list that names `mfa` anywhere requires a second factor, from the query as from a pushed
 * request (RFC 9126), however the spaces were encoded. A value that only contains the letters
 * (`urn:example:mfa`, `mfa2`) is another value, ignored as every unknown one is.
 */

let t: TestApp;
let client: TestClient;
beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t);
});
afterAll(() => t.close());

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

/** A browser signed in with a password alone. */
async function passwordSession(): Promise<Browser> {
  const browser = new Browser(t.app);
  await browser.signIn(await makeUser(t));
  return browser;
}

/** Whether the answer sends the user to the second step (rather than on to consent). */
function asksSecondFactor(res: LightMyRequestResponse): boolean {
  return res.statusCode === 302 && String(res.headers.location).startsWith('/signin/second-factor?request=');
}

const LISTS_NAMING_MFA = [
  'mfa',
  'mfa urn:example:loa:2',
  'urn:example:loa:2 mfa',
  'urn:example:loa:1 mfa urn:example:loa:3',
  'urn:example:loa:2  mfa',
];

describe('acr_values naming mfa in any position', () => {
  it.each(LISTS_NAMING_MFA)(
    '"%s" in the query sends a password-only session to the second step',
    async (list) => {
      const browser = await passwordSession();
      const res = await browser.get(authorizeUrl(client, { scope: 'openid', acr_values: list }));
      expect(asksSecondFactor(res), `${res.statusCode} ${res.headers.location}`).toBe(true);
    },
  );

  it('with its spaces encoded as +, as forms encode them', async () => {
    const browser = await passwordSession();
    const url = `${authorizeUrl(client, { scope: 'openid' })}&acr_values=urn:example:loa:2+mfa`;
    expect(asksSecondFactor(await browser.get(url))).toBe(true);
  });

  it.each(LISTS_NAMING_MFA)('"%s" in a pushed request does the same', async (list) => {
    const pushed = await postForm(
      t.app,
      '/api/v1/oauth/par',
      {
        response_type: 'code',
        redirect_uri: client.redirectUri,
        state: 'st-pushed',
        scope: 'openid',
        code_challenge: s256(VERIFIER),
        code_challenge_method: 'S256',
        acr_values: list,
      },
      { authorization: basic(client) },
    );
    expect(pushed.statusCode).toBe(201);
    const browser = await passwordSession();
    const query = new URLSearchParams({ client_id: client.clientId, request_uri: pushed.json().request_uri });
    expect(asksSecondFactor(await browser.get(`/api/v1/oauth/authorize?${query}`))).toBe(true);
  });

  it.each(['urn:example:mfa', 'mfa2 urn:example:loa:2', 'urn:example:loa:2'])(
    '"%s" names no mfa: the consent page follows',
    async (list) => {
      const browser = await passwordSession();
      const res = await browser.get(authorizeUrl(client, { scope: 'openid', acr_values: list }));
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('action="/api/v1/oauth/authorize/decision"');
    },
  );
});
