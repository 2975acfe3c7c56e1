import { generateKeyPair, SignJWT } from 'jose';
import * as oidcClient from 'openid-client';
import { describe, expect, it } from 'vitest';
import { updateClient } from '../../src/modules/clients/clients.service.js';
import { currentSigner, retireSigningKey, rotateSigningKey } from '../../src/modules/oidc/keys.service.js';
import { hiddenFields } from '../helpers/browser.js';
import { makeClient } from '../helpers/factories.js';
import { authorizeUrl, exchangeCode } from '../helpers/http.js';
import {
  alice,
  bare,
  ctx,
  expectLogoutRefused,
  hintFor,
  LOGOUT,
  LOOPBACK_RETURN_URI,
  logoutUrl,
  RETURN_URI,
  setUpLogoutApp,
  signedIn,
  site,
  stillSignedIn,
  t,
} from './logout.fixture.js';

/*
 * The checks of a logout request (OIDC RP-Initiated Logout 1.0 §2–§4): every problem is the error
 * page (400), never a redirect, and the session stays. And a real client library's logout URL.
 */
setUpLogoutApp();

/** Claims as our id_tokens carry them, for tokens signed here by other means. */
const claimsOf = (sub: number) => {
  const now = Math.floor(t.clock.now().getTime() / 1000);
  return {
    iss: t.config.PUBLIC_URL,
    sub: String(sub),
    aud: site.clientId,
    iat: now,
    exp: now + 3600,
    auth_time: now,
  };
};

describe('id_token_hint', () => {
  it('is refused when it is not ours: forged, another issuer, garbage, or a logout token', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const { kid } = await currentSigner(t.database.db, ctx);
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT(claimsOf(alice.id))
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .sign(privateKey);
    const otherIssuer = await hintFor(alice, {
      context: { ...ctx, config: { ...t.config, PUBLIC_URL: 'https://other.example' } },
    });
    const signer = await currentSigner(t.database.db, ctx);
    const logoutToken = await new SignJWT({ ...claimsOf(alice.id), events: {} })
      .setProtectedHeader({ alg: 'RS256', kid: signer.kid, typ: 'logout+jwt' })
      .sign(signer.key);
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claimsOf(alice.id))).toString('base64url')}.`;
    for (const hint of [forged, otherIssuer, logoutToken, unsigned, 'not-a-jwt']) {
      const res = await browser.get(logoutUrl({ id_token_hint: hint, post_logout_redirect_uri: RETURN_URI }));
      expectLogoutRefused(res, /not a valid ID Token/);
    }
    expect(await stillSignedIn(cookie)).toBe(true);
  });

  it('no longer verifies once its key is retired', async () => {
    const browser = await signedIn(alice);
    const hint = await hintFor(alice);
    const old = await currentSigner(t.database.db, ctx);
    await rotateSigningKey(t.database.db, ctx);
    await retireSigningKey(t.database.db, ctx, old.kid);
    expectLogoutRefused(await browser.get(logoutUrl({ id_token_hint: hint })));
  });

  it('must name the client_id sent with it in its audience', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const res = await browser.get(
      logoutUrl({
        id_token_hint: await hintFor(alice),
        client_id: bare.clientId,
        post_logout_redirect_uri: RETURN_URI,
      }),
    );
    expectLogoutRefused(res, /not the audience/);
    expect(await stillSignedIn(cookie)).toBe(true);
  });
});

describe('post_logout_redirect_uri', () => {
  it('is refused unless registered for the client, exactly (no loopback port relaxation)', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const hint = await hintFor(alice);
    for (const uri of [
      'https://evil.example/',
      `${RETURN_URI}/`,
      `${RETURN_URI}?x=1`,
      'https://SITE.example/signed-out',
      LOOPBACK_RETURN_URI.replace('8080', '8081'),
    ]) {
      expectLogoutRefused(
        await browser.get(logoutUrl({ id_token_hint: hint, post_logout_redirect_uri: uri })),
        /not registered/,
      );
    }
    // A URI of another client is not this client's.
    expectLogoutRefused(
      await browser.get(logoutUrl({ client_id: bare.clientId, post_logout_redirect_uri: RETURN_URI })),
    );
    expect(await stillSignedIn(cookie)).toBe(true);
  });

  it('needs a known client: a client_id or a hint', async () => {
    expectLogoutRefused(
      await t.app.inject({ method: 'GET', url: logoutUrl({ post_logout_redirect_uri: RETURN_URI }) }),
      /needs a client_id/,
    );
    expectLogoutRefused(
      await t.app.inject({ method: 'GET', url: logoutUrl({ client_id: 'pk_unknown' }) }),
      /not a registered application/,
    );
  });

  it('is refused for a disabled client', async () => {
    const disabled = await makeClient(t, {
      postLogoutRedirectUris: [RETURN_URI],
    });
    await updateClient(t.database.db, ctx, disabled.clientId, { disabled: true });
    const res = await t.app.inject({
      method: 'GET',
      url: logoutUrl({ client_id: disabled.clientId, post_logout_redirect_uri: RETURN_URI }),
    });
    expectLogoutRefused(res);
  });
});

describe('parameters', () => {
  it('are refused when repeated, in the query and in the form', async () => {
    const browser = await signedIn(alice);
    const query = `${LOGOUT}?client_id=${site.clientId}&state=a&state=b`;
    expectLogoutRefused(await browser.get(query), /state parameter must be sent once/);
    const res = await t.app.inject({
      method: 'POST',
      url: LOGOUT,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `client_id=${site.clientId}&client_id=${site.clientId}`,
    });
    expectLogoutRefused(res, /client_id parameter must be sent once/);
  });

  it('logout_hint and unknown ones are ignored', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: logoutUrl({
        logout_hint: 'alice',
        foo: 'bar',
        client_id: site.clientId,
        post_logout_redirect_uri: RETURN_URI,
      }),
    });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(RETURN_URI);
  });
});

describe('discovery and a client library', () => {
  it('lists the end_session_endpoint', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    expect(res.json()).toMatchObject({ end_session_endpoint: `${t.config.PUBLIC_URL}${LOGOUT}` });
  });

  it('openid-client 6: buildEndSessionUrl with the id_token of a real sign-in logs out at once', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    // The site's sign-in, in this browser: consent, the code, the token response's id_token.
    const consent = await browser.get(authorizeUrl(site, { scope: 'openid' }));
    expect(consent.statusCode, consent.body).toBe(200);
    const decision = '/api/v1/oauth/authorize/decision';
    const allowed = await browser.post(decision, {
      ...hiddenFields(consent.body, decision),
      decision: 'allow',
    });
    const code = new URL(allowed.headers.location as string).searchParams.get('code') as string;
    const { id_token } = (await exchangeCode(t.app, site, code)).json() as { id_token: string };

    const metadata = (await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
    const config = new oidcClient.Configuration(metadata, site.clientId, site.clientSecret);
    oidcClient.allowInsecureRequests(config); // PUBLIC_URL is http://localhost in tests
    const url = oidcClient.buildEndSessionUrl(config, {
      id_token_hint: id_token,
      post_logout_redirect_uri: RETURN_URI,
      state: 'from-openid-client',
    });
    expect(url.origin + url.pathname).toBe(`${t.config.PUBLIC_URL}${LOGOUT}`);
    const res = await browser.get(`${url.pathname}${url.search}`);
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(`${RETURN_URI}?state=from-openid-client`);
    expect(await stillSignedIn(cookie)).toBe(false);
  });
});
