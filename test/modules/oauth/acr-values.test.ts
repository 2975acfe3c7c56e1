import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../../helpers/factories.js';
import { authorizeUrl, exchangeCode } from '../../helpers/http.js';

/**
 * How the user signed in reaches the site (RFC 8176): `amr` in every id_token, `acr`
 * only when a second factor was used, and `acr_values=mfa` stops a password-only session from
 * getting a code.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const authorize = (c: TestClient, params: Record<string, string> = {}) =>
  authorizeUrl(c, { scope: 'openid profile', ...params });

function codeOf(res: LightMyRequestResponse): string {
  expect([302, 303]).toContain(res.statusCode);
  const code = new URL(String(res.headers.location)).searchParams.get('code');
  expect(code).toMatch(/^ac_/);
  return code as string;
}

async function idTokenClaims(client: TestClient, code: string): Promise<Record<string, unknown>> {
  const idToken = ((await exchangeCode(t.app, client, code)).json() as { id_token: string }).id_token;
  return JSON.parse(Buffer.from(idToken.split('.')[1] as string, 'base64url').toString());
}

async function signedInUser(): Promise<{ client: TestClient; user: TestUser; browser: Browser }> {
  const client = await makeClient(t);
  const user = await makeUser(t);
  const browser = new Browser(t.app);
  await browser.signIn(user);
  return { client, user, browser };
}

/** Allows the client on the consent page the authorize request leads to. */
async function allow(browser: Browser, page: LightMyRequestResponse): Promise<LightMyRequestResponse> {
  expect(page.statusCode).toBe(200);
  return browser.post('/api/v1/oauth/authorize/decision', {
    ...hiddenFields(page.body, '/api/v1/oauth/authorize/decision'),
    decision: 'allow',
  });
}

/** Marks the user's sessions as signed in with these methods (what the second step records). */
async function sessionsUsed(user: TestUser, amr: string[]): Promise<void> {
  await t.database.db.updateTable('browser_sessions').set({ amr }).where('user_id', '=', user.id).execute();
}

describe('amr and acr in the id_token', () => {
  it('a password sign-in: amr ["pwd"] and no acr', async () => {
    const { client, browser } = await signedInUser();
    const claims = await idTokenClaims(
      client,
      codeOf(await allow(browser, await browser.get(authorize(client)))),
    );
    expect(claims.amr).toEqual(['pwd']);
    expect(claims).not.toHaveProperty('acr');
  });

  it('a sign-in with a second factor: its amr, and acr "mfa"', async () => {
    const { client, user, browser } = await signedInUser();
    await sessionsUsed(user, ['pwd', 'otp', 'mfa']);
    const page = await browser.get(authorize(client, { acr_values: 'mfa' }));
    const claims = await idTokenClaims(client, codeOf(await allow(browser, page)));
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims.acr).toBe('mfa');
  });

  it('discovery lists the acr value and the claims', async () => {
    const doc = (await t.app.inject('/.well-known/openid-configuration')).json();
    expect(doc.acr_values_supported).toEqual(['mfa']);
    expect(doc.claims_supported).toEqual(expect.arrayContaining(['amr', 'acr']));
  });
});

describe('acr_values=mfa', () => {
  it('sends a password-only session to the second step, keeping the request', async () => {
    const { client, browser } = await signedInUser();
    const res = await browser.get(authorize(client, { acr_values: 'mfa' }));
    expect(res.statusCode).toBe(302);
    const location = new URL(String(res.headers.location), 'http://x');
    expect(location.pathname).toBe('/signin/second-factor');
    const resumed = await browser.get(
      `/api/v1/oauth/authorize/resume?request=${location.searchParams.get('request')}`,
    );
    // Resuming without the second factor leads there again: nothing skips the step.
    expect(resumed.headers.location).toBe(`${location.pathname}${location.search}`);
  });

  it('a decision posted with a password-only session goes to the second step, and no code is issued', async () => {
    const { client, user, browser } = await signedInUser();
    await sessionsUsed(user, ['pwd', 'otp', 'mfa']);
    const consent = await browser.get(authorize(client, { acr_values: 'mfa' }));
    await sessionsUsed(user, ['pwd']);
    const decided = await allow(browser, consent);
    expect(decided.statusCode).toBe(303);
    expect(String(decided.headers.location)).toMatch(/^\/signin\/second-factor\?request=/);
  });

  it('with prompt=none it answers login_required to the site', async () => {
    const { client, browser } = await signedInUser();
    await allow(browser, await browser.get(authorize(client)));
    const res = await browser.get(authorize(client, { acr_values: 'mfa', prompt: 'none' }));
    const location = new URL(String(res.headers.location));
    expect(location.searchParams.get('error')).toBe('login_required');
    expect(location.searchParams.get('state')).toBe('st-1');
  });

  it('other values are no reason to stop (OIDC Core §3.1.2.1: voluntary)', async () => {
    const { client, browser } = await signedInUser();
    const page = await browser.get(authorize(client, { acr_values: 'urn:example:loa:2' }));
    const claims = await idTokenClaims(client, codeOf(await allow(browser, page)));
    expect(claims.amr).toEqual(['pwd']);
  });
});
