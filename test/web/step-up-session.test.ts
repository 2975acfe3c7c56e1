import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withMethods } from '../../src/lib/amr.js';
import { totpCodeAt } from '../../src/modules/mfa/totp-code.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, forms, hiddenFields, hiddenFieldsOf } from '../helpers/browser.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../helpers/factories.js';
import { authorizeUrl, exchangeCode } from '../helpers/http.js';

/**
 * What `amr` and `auth_time` say after a second factor is passed or enrolled on a session that is
 * already signed in (OIDC Core §2 and §3.1.2.1, RFC 8176): the session gains `otp mfa`, keeps
 * its `auth_time`, and prompt=login or max_age are not satisfied by a code alone.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const SECURITY = '/account/security';
const STEP = '/signin/second-factor';
const codeNow = (key: string) => totpCodeAt(key, t.clock.now());

async function claimsOf(client: TestClient, res: LightMyRequestResponse): Promise<Record<string, unknown>> {
  expect([302, 303]).toContain(res.statusCode);
  const code = new URL(String(res.headers.location)).searchParams.get('code');
  expect(code).toMatch(/^ac_/);
  const idToken = ((await exchangeCode(t.app, client, code as string)).json() as { id_token: string })
    .id_token;
  return JSON.parse(Buffer.from(idToken.split('.')[1] as string, 'base64url').toString());
}

async function allow(browser: Browser, consent: LightMyRequestResponse): Promise<LightMyRequestResponse> {
  expect(consent.statusCode).toBe(200);
  return browser.post('/api/v1/oauth/authorize/decision', {
    ...hiddenFields(consent.body, '/api/v1/oauth/authorize/decision'),
    decision: 'allow',
  });
}

/** A signed-in browser of a user with TOTP on; the key and when the browser signed in (seconds). */
async function signedInWithTotp(): Promise<{
  user: TestUser;
  browser: Browser;
  key: string;
  signedInAt: number;
}> {
  const user = await makeUser(t);
  const browser = new Browser(t.app);
  await browser.signIn(user);
  const signedInAt = Math.floor(t.clock.now().getTime() / 1000);
  await browser.submit(SECURITY, `${SECURITY}/totp`, {});
  const page = await browser.get(SECURITY);
  const key = (/<code class="totp-key">([A-Z2-7 ]+)<\/code>/.exec(page.body)?.[1] ?? '').replaceAll(' ', '');
  const confirmed = await browser.post(`${SECURITY}/totp/confirm`, {
    ...hiddenFields(page.body, `${SECURITY}/totp/confirm`),
    code: codeNow(key),
  });
  expect(confirmed.statusCode).toBe(200);
  t.clock.advance(60_000);
  return { user, browser, key, signedInAt };
}

async function sessionRow(user: TestUser) {
  return t.database.db
    .selectFrom('browser_sessions')
    .select(['id_hash', 'auth_time', 'amr'])
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow();
}

describe('a code alone is no new sign-in', () => {
  for (const params of [{ prompt: 'login' }, { max_age: '0' }] as Record<string, string>[]) {
    it(`${JSON.stringify(params)}: a TOTP code at the second step yields no code and no new auth_time`, async () => {
      const { user, browser, key } = await signedInWithTotp();
      const client = await makeClient(t);
      const before = await sessionRow(user);
      const start = await browser.get(authorizeUrl(client, { scope: 'openid', ...params }));
      const signInPage = String(start.headers.location);
      expect(signInPage).toMatch(/^\/signin\?request=/);
      const request = new URL(signInPage, 'http://x').searchParams.get('request') as string;
      // Skipping the password: straight to the second step of the same request, with a good code.
      const stepped = await browser.submit(`${STEP}?request=${request}`, STEP, { code: codeNow(key) });
      expect(stepped.statusCode).toBe(303);
      const resumed = await browser.get(String(stepped.headers.location));
      // Back to the password: the request still waits for a sign-in, and no code reached the site.
      expect(String(resumed.headers.location)).toMatch(/^\/signin\?request=/);
      const after = await sessionRow(user);
      expect(after.id_hash).toBe(before.id_hash);
      expect(after.auth_time).toEqual(before.auth_time);
      expect(after.amr).toEqual(['pwd', 'otp', 'mfa']);
    });
  }

  it('the password then still satisfies prompt=login, with a new auth_time', async () => {
    const { user, browser, key } = await signedInWithTotp();
    const client = await makeClient(t);
    const start = await browser.get(authorizeUrl(client, { scope: 'openid', prompt: 'login' }));
    const step = await browser.signIn(user, String(start.headers.location));
    const done = await browser.submit(String(step.headers.location), STEP, { code: codeNow(key) });
    const claims = await claimsOf(
      client,
      await allow(browser, await browser.get(String(done.headers.location))),
    );
    expect(claims.auth_time).toBe(Math.floor(t.clock.now().getTime() / 1000));
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
  });
});

describe('a step-up on a signed-in session (acr_values=mfa)', () => {
  it('adds otp and mfa, gives acr mfa, and keeps the sign-in’s auth_time', async () => {
    const { user, browser, key, signedInAt } = await signedInWithTotp();
    // The session as a password sign-in left it (enrolment without a site's request upgrades nothing).
    await t.database.db
      .updateTable('browser_sessions')
      .set({ amr: ['pwd'] })
      .where('user_id', '=', user.id)
      .execute();
    const client = await makeClient(t);
    const step = await browser.get(authorizeUrl(client, { scope: 'openid', acr_values: 'mfa' }));
    expect(String(step.headers.location)).toMatch(/^\/signin\/second-factor\?request=/);
    const done = await browser.submit(String(step.headers.location), STEP, { code: codeNow(key) });
    const claims = await claimsOf(
      client,
      await allow(browser, await browser.get(String(done.headers.location))),
    );
    expect(claims.acr).toBe('mfa');
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims.auth_time).toBe(signedInAt);
  });

  it('an enrolment during the step-up upgrades the session the same way', async () => {
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    await browser.signIn(user);
    const signedInAt = Math.floor(t.clock.now().getTime() / 1000);
    const before = await sessionRow(user);
    t.clock.advance(60_000);
    const client = await makeClient(t);
    const step = await browser.get(authorizeUrl(client, { scope: 'openid', acr_values: 'mfa' }));
    const toSecurity = await browser.get(String(step.headers.location));
    const securityUrl = String(toSecurity.headers.location);
    expect(securityUrl).toMatch(/^\/account\/security\?request=/);
    const started = await browser.submit(securityUrl, `${SECURITY}/totp`, {});
    const page = await browser.get(String(started.headers.location));
    const key = (/<code class="totp-key">([A-Z2-7 ]+)<\/code>/.exec(page.body)?.[1] ?? '').replaceAll(
      ' ',
      '',
    );
    const confirmed = await browser.post(`${SECURITY}/totp/confirm`, {
      ...hiddenFields(page.body, `${SECURITY}/totp/confirm`),
      code: codeNow(key),
    });
    // Once the recovery codes are saved, "Continue to the site": a GET form to the request.
    const saved = forms(confirmed.body).find((form) => form.html.includes('id="codes-saved"'));
    const next = `${saved?.action}?${new URLSearchParams(hiddenFieldsOf(saved?.html ?? ''))}`;
    expect(next).toMatch(/^\/api\/v1\/oauth\/authorize\/resume\?request=/);
    const claims = await claimsOf(client, await allow(browser, await browser.get(next)));
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims.acr).toBe('mfa');
    expect(claims.auth_time).toBe(signedInAt);
    expect((await sessionRow(user)).id_hash).toBe(before.id_hash);
  });
});

describe('withMethods', () => {
  it('keeps the methods used, adds the new ones once, and never invents a password', () => {
    expect(withMethods(['pwd'], ['otp', 'mfa'])).toEqual(['pwd', 'otp', 'mfa']);
    expect(withMethods(['hwk', 'user', 'mfa'], ['otp', 'mfa'])).toEqual(['hwk', 'user', 'otp', 'mfa']);
    expect(withMethods(['pwd', 'otp', 'mfa'], ['otp', 'mfa'])).toEqual(['pwd', 'otp', 'mfa']);
  });
});
