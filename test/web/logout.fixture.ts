import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Context } from '../../src/context.js';
import { hashSecret } from '../../src/lib/secrets.js';
import { findUserById } from '../../src/modules/accounts/accounts.repository.js';
import { findActiveSession } from '../../src/modules/accounts/sessions.repository.js';
import { latestAuditEvents } from '../../src/modules/audit/audit.repository.js';
import { signIdToken } from '../../src/modules/oidc/id-token.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser } from '../helpers/browser.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../helpers/factories.js';

/** What the logout test files share: one app, two users, a site with a post-logout URI, one without. */
export let t: TestApp;
export let ctx: Context;
export let alice: TestUser;
export let bob: TestUser;
/** Registered with RETURN_URI as its post-logout redirect URI. */
export let site: TestClient;
/** Registered with no post-logout redirect URI. */
export let bare: TestClient;

export const LOGOUT = '/api/v1/oauth/logout';
export const RETURN_URI = 'https://site.example/signed-out';
export const LOOPBACK_RETURN_URI = 'http://127.0.0.1:8080/signed-out';

export function setUpLogoutApp(): void {
  beforeAll(async () => {
    t = await createTestApp();
    ctx = { config: t.config, clock: t.clock };
    alice = await makeUser(t);
    bob = await makeUser(t);
    site = await makeClient(t, {
      name: 'Northwind Games',
      postLogoutRedirectUris: [RETURN_URI, LOOPBACK_RETURN_URI],
    });
    bare = await makeClient(t, { name: 'Plain Site', siteUrl: 'https://plain.example' });
  });
  afterAll(() => t.close());
}

/** A browser signed in as `who` (through the sign-in form, at the test clock's time). */
export async function signedIn(who: TestUser): Promise<Browser> {
  const browser = new Browser(t.app);
  await browser.signIn(who);
  return browser;
}

/** An id_token for `who`, as the token endpoint signs it: by default for `site`, signed in now. */
export async function hintFor(
  who: TestUser,
  options: { clientId?: string; authTime?: Date; sid?: string; context?: Context } = {},
): Promise<string> {
  const user = await findUserById(t.database.db, who.id);
  if (!user) throw new Error(`no user ${who.username}`);
  return signIdToken(t.database.db, options.context ?? ctx, {
    user,
    clientId: options.clientId ?? site.clientId,
    scopes: ['openid'],
    nonce: null,
    authTime: options.authTime ?? t.clock.now(),
    amr: ['pwd'],
    sid: options.sid ?? null,
  });
}

/** The logout endpoint's URL with these parameters. */
export function logoutUrl(params: Record<string, string> = {}): string {
  const query = new URLSearchParams(params).toString();
  return query ? `${LOGOUT}?${query}` : LOGOUT;
}

/** The public `sid` of the session a browser's cookie holds. */
export async function sidOf(sessionCookie: string | undefined): Promise<string> {
  const session = await findActiveSession(t.database.db, hashSecret(sessionCookie ?? ''), t.clock.now());
  if (!session) throw new Error('the browser holds no session');
  return session.sid;
}

/** Whether the browser's session cookie still signs in (the account page opens). */
export async function stillSignedIn(sessionCookie: string | undefined): Promise<boolean> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/account',
    cookies: sessionCookie ? { idp_session: sessionCookie } : {},
  });
  return res.statusCode === 200;
}

/** The 400 page of a logout request that does not check out: never a redirect. */
export function expectLogoutRefused(res: LightMyRequestResponse, detail?: RegExp): void {
  expect(res.statusCode, res.body).toBe(400);
  expect(res.headers.location).toBeUndefined();
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.body).toContain('This sign-out link is not valid');
  if (detail) expect(res.body).toMatch(detail);
}

/** The confirmation page: its heading and the form that posts to the confirm route. */
export function expectConfirmation(res: LightMyRequestResponse): void {
  expect(res.statusCode, res.body).toBe(200);
  expect(res.body).toContain('<h1>Sign out?</h1>');
  expect(res.body).toContain('action="/api/v1/oauth/logout/confirm"');
}

/** The last `signed_out` audit event, if any. */
export async function lastSignOutEvent() {
  const events = await latestAuditEvents(t.database.db, 50);
  return events.filter((event) => event.action === 'signed_out').at(-1);
}
