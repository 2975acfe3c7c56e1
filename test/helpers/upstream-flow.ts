import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { addProvider } from '../../src/modules/upstream/providers.service.js';
import type { TestApp } from './app.js';
import type { Browser } from './browser.js';
import { depsOf } from './factories.js';
import { hiddenFields } from './html.js';
import { formPostFields, startAppleStandIn } from './upstream/apple-standin.js';
import { startGithubStandIn } from './upstream/github-standin.js';
import { startOidcStandIn } from './upstream/oidc-standin.js';

/**
 * Signing in through a provider as a browser does, over `app.inject` for our side and fetch for the
 * stand-in's: the button's form, the provider's redirect back (or Apple's form post, sent without
 * our cookies as a cross-site POST is), and the callback with this browser's cookies.
 */
export async function throughProvider(
  browser: Browser,
  name: string,
  options: { from?: string; action?: string; fields?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  const action = options.action ?? `/signin/providers/${name}`;
  const page = await browser.get(options.from ?? '/signin');
  expect(page.statusCode, page.body.slice(0, 300)).toBe(200);
  const started = await browser.post(action, { ...hiddenFields(page.body, action), ...options.fields });
  if (started.statusCode !== 303) return started;
  const atProvider = await fetch(started.headers.location as string, { redirect: 'manual' });
  return answerOf(browser, atProvider);
}

/** What the provider's answer makes of the callback. */
export async function answerOf(browser: Browser, atProvider: Response): Promise<LightMyRequestResponse> {
  if (atProvider.status === 200) {
    const { action, fields } = formPostFields(await atProvider.text());
    const url = new URL(action);
    // The provider's page posts cross-site: SameSite=Lax cookies stay behind.
    const posted = await browser.app.inject({
      method: 'POST',
      url: url.pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });
    expect(posted.statusCode).toBe(303);
    return browser.get(posted.headers.location as string);
  }
  expect([302, 303]).toContain(atProvider.status);
  const back = new URL(atProvider.headers.get('location') as string);
  return browser.get(`${back.pathname}${back.search}`);
}

/** The callback URL the provider is told for `name`, as the test app's PUBLIC_URL makes it. */
export function callbackOf(t: TestApp, name: string): string {
  return `${t.config.PUBLIC_URL}/signin/providers/${name}/callback`;
}

export const CLIENT = { clientId: 'idp-client', clientSecret: 'idp-client-secret-0123456789' };

/** An OpenID stand-in and the provider `oidc` configured for it. */
export async function oidcProvider(
  t: TestApp,
  accounts: Parameters<typeof startOidcStandIn>[0]['accounts'],
  settings: { name?: string; trustAmr?: boolean } = {},
) {
  const name = settings.name ?? 'oidc';
  const standIn = await startOidcStandIn({ ...CLIENT, accounts, redirectUris: [callbackOf(t, name)] });
  const { db, ctx } = depsOf(t);
  await addProvider(
    db,
    ctx,
    {
      name,
      kind: 'oidc',
      displayName: 'Example ID',
      issuer: standIn.url,
      clientId: CLIENT.clientId,
      clientSecret: CLIENT.clientSecret,
      trustAmr: settings.trustAmr,
    },
    'cli',
  );
  return standIn;
}

export async function githubProvider(
  t: TestApp,
  accounts: Parameters<typeof startGithubStandIn>[0]['accounts'],
) {
  const standIn = await startGithubStandIn({ ...CLIENT, accounts, redirectUris: [callbackOf(t, 'github')] });
  const { db, ctx } = depsOf(t);
  await addProvider(
    db,
    ctx,
    { name: 'github', kind: 'github', issuer: standIn.url, apiUrl: standIn.url, ...CLIENT },
    'cli',
  );
  return standIn;
}

export async function appleProvider(
  t: TestApp,
  accounts: Parameters<typeof startAppleStandIn>[0]['accounts'],
) {
  const standIn = await startAppleStandIn({ accounts, redirectUris: [callbackOf(t, 'apple')] });
  const { db, ctx } = depsOf(t);
  await addProvider(
    db,
    ctx,
    {
      name: 'apple',
      kind: 'apple',
      issuer: standIn.url,
      clientId: standIn.clientId,
      appleTeamId: standIn.teamId,
      appleKeyId: standIn.keyId,
      applePrivateKey: standIn.privateKeyPem,
    },
    'cli',
  );
  return standIn;
}
