import type { LightMyRequestResponse } from 'fastify';
import { decodeJwt } from 'jose';
import { expect } from 'vitest';
import { createClient } from '../../../src/modules/clients/clients.service.js';
import type { TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { depsOf, type TestClient, type TestUser } from '../../helpers/factories.js';
import { authorizeUrl, exchangeCode } from '../../helpers/http.js';

// Sites signed in through the real pages, and what the back-channel logout outbox holds.

/** A client registered with a back-channel logout URI (or none). */
export async function makeSite(
  t: TestApp,
  backchannelLogoutUri?: string,
  name = 'BCL Site',
): Promise<TestClient> {
  const redirectUri = 'https://site.example/callback';
  const client = await createClient(t.database.db, depsOf(t).ctx, {
    name,
    siteUrl: 'https://site.example',
    redirectUris: [redirectUri],
    ...(backchannelLogoutUri === undefined ? {} : { backchannelLogoutUri }),
  });
  return { clientId: client.client_id, clientSecret: client.client_secret, redirectUri };
}

/** A browser signed in as `user` on the sign-in page. */
export async function signedIn(t: TestApp, user: TestUser): Promise<Browser> {
  const browser = new Browser(t.app);
  await browser.signIn(user);
  return browser;
}

/** The code of an authorize request in `browser`, through the consent page when it is shown. */
export async function approve(
  browser: Browser,
  client: TestClient,
  scope = 'openid profile',
): Promise<string> {
  let res: LightMyRequestResponse = await browser.get(authorizeUrl(client, { scope }));
  if (res.statusCode === 200) {
    const hidden = hiddenFields(res.body, '/api/v1/oauth/authorize/decision');
    res = await browser.post('/api/v1/oauth/authorize/decision', {
      ...hidden,
      decision: 'allow',
      share_email: '1',
    });
  }
  expect([302, 303]).toContain(res.statusCode);
  const code = new URL(res.headers.location as string).searchParams.get('code');
  expect(code).toMatch(/^ac_/);
  return code as string;
}

/** Signs `browser` in to the site: a code redeemed, its id_token's claims answered. */
export async function signInTo(
  t: TestApp,
  browser: Browser,
  client: TestClient,
): Promise<Record<string, unknown>> {
  const res = await exchangeCode(t.app, client, await approve(browser, client));
  expect(res.statusCode).toBe(200);
  return decodeJwt(res.json().id_token as string);
}

/** The queued logouts, oldest first, by client_id. */
export async function queuedLogouts(t: TestApp) {
  const rows = await t.database.db
    .selectFrom('backchannel_logouts as l')
    .innerJoin('clients as c', 'c.id', 'l.client_pk')
    .select(['c.client_id as clientId', 'l.user_id as userId', 'l.sid', 'l.reason'])
    .orderBy('l.id')
    .execute();
  return rows.map((row) => ({ ...row, userId: Number(row.userId) }));
}
