import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeProvider } from '../../../src/modules/upstream/providers.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { depsOf } from '../../helpers/factories.js';
import { type AppleStandIn, formPostFields } from '../../helpers/upstream/apple-standin.js';
import type { GithubStandIn } from '../../helpers/upstream/github-standin.js';
import { appleProvider, githubProvider, throughProvider } from '../../helpers/upstream-flow.js';

/*
 * GitHub (OAuth 2.0 and its REST API) and Sign in with Apple (form_post, an ES256 client secret
 * made per request, the name sent on the first sign-in only), each against a stand-in shaped like it.
 */
let t: TestApp;
let github: GithubStandIn;
let apple: AppleStandIn;

beforeAll(async () => {
  t = await createTestApp();
  t.clock.set(new Date());
  github = await githubProvider(t, {
    octo: {
      id: 583231,
      login: 'octocat',
      name: 'The Octocat',
      email: null,
      emails: [
        { email: 'old@example.org', primary: false, verified: true },
        { email: 'octo@example.org', primary: true, verified: true },
      ],
    },
    renamed: { id: 583231, login: 'octocat-renamed', emails: [] },
    unverified: {
      id: 9001,
      login: 'fresh',
      emails: [{ email: 'fresh@example.org', primary: true, verified: false }],
    },
    private: {
      id: 9002,
      login: 'private',
      emails: [{ email: 'private@example.org', primary: true, verified: true }],
    },
  });
  apple = await appleProvider(t, {
    jane: {
      sub: '001234.abcdef.1234',
      email: 'jane@privaterelay.appleid.com',
      firstName: 'Jane',
      lastName: 'Appleseed',
    },
    ann: {
      sub: '001234.abcdef.2001',
      email: 'ann@privaterelay.appleid.com',
      firstName: 'Ann',
      lastName: 'Orchard',
    },
    bob: {
      sub: '001234.abcdef.2002',
      email: 'bob@privaterelay.appleid.com',
      firstName: 'Bob',
      lastName: 'Orchard',
    },
  });
});

afterAll(async () => {
  await github?.stop();
  await apple?.stop();
  await t?.close();
});

async function createAccount(browser: Browser, username: string) {
  const page = await browser.get('/signin/providers/continue');
  expect(page.statusCode).toBe(200);
  const made = await browser.post('/signin/providers/continue', {
    ...hiddenFields(page.body, '/signin/providers/continue'),
    username,
  });
  expect(made.statusCode).toBe(303);
  return page;
}

describe('GitHub', () => {
  it('makes an account from the numeric id, the login suggested and the primary verified address taken', async () => {
    github.nextAccount = 'octo';
    const browser = new Browser(t.app);
    expect((await throughProvider(browser, 'github')).headers.location).toBe('/signin/providers/continue');
    const page = await createAccount(browser, 'octocat');
    expect(page.body).toContain('value="octocat"');
    const token = github.requests.find((request) => request.path === '/login/oauth/access_token');
    expect(token?.params.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const link = await t.database.db
      .selectFrom('upstream_links')
      .innerJoin('users', 'users.id', 'upstream_links.user_id')
      .select(['subject', 'users.email', 'users.email_verified', 'label'])
      .where('users.username', '=', 'octocat')
      .executeTakeFirstOrThrow();
    expect(link).toEqual({
      subject: '583231',
      email: 'octo@example.org',
      email_verified: true,
      label: 'octocat',
    });
  });

  it('finds the account by the id after the login was renamed', async () => {
    github.nextAccount = 'renamed';
    const browser = new Browser(t.app);
    expect((await throughProvider(browser, 'github')).headers.location).toBe('/account');
    expect((await browser.get('/account')).body).toContain('octocat');
  });

  it('does not take over an address GitHub did not verify', async () => {
    github.nextAccount = 'unverified';
    const browser = new Browser(t.app);
    await throughProvider(browser, 'github');
    await createAccount(browser, 'fresh_one');
    const user = await t.database.db
      .selectFrom('users')
      .select('email')
      .where('username', '=', 'fresh_one')
      .executeTakeFirstOrThrow();
    expect(user.email).toBeNull();
  });

  it('signs in without an address when GitHub refuses the address list (user:email not granted)', async () => {
    const { db, ctx } = depsOf(t);
    await changeProvider(db, ctx, { name: 'github', scopes: 'read:user' }, 'cli');
    try {
      github.nextAccount = 'private';
      const browser = new Browser(t.app);
      const back = await throughProvider(browser, 'github');
      expect(back.headers.location, back.body.slice(-800)).toBe('/signin/providers/continue');
      expect(github.requests.some((request) => request.path === '/user/emails')).toBe(true);
      await createAccount(browser, 'no_address');
      const user = await t.database.db
        .selectFrom('users')
        .select('email')
        .where('username', '=', 'no_address')
        .executeTakeFirstOrThrow();
      expect(user.email).toBeNull();
    } finally {
      await changeProvider(db, ctx, { name: 'github', scopes: 'read:user user:email' }, 'cli');
    }
  });
});

describe('Sign in with Apple', () => {
  /** Apple's form post and its redirect as the browser makes them, the redirect's URL changed by `change`. */
  async function formPostWalk(account: string, change?: (location: URL, user: string) => void) {
    apple.nextAccount = account;
    const browser = new Browser(t.app);
    const action = '/signin/providers/apple';
    const started = await browser.post(action, hiddenFields((await browser.get('/signin')).body, action));
    const atProvider = await fetch(started.headers.location as string, { redirect: 'manual' });
    const { action: callback, fields } = formPostFields(await atProvider.text());
    expect(fields.user).toContain('Orchard');
    const posted = await t.app.inject({
      method: 'POST',
      url: new URL(callback).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });
    expect(posted.statusCode).toBe(303);
    const location = new URL(posted.headers.location as string, t.config.PUBLIC_URL);
    change?.(location, fields.user as string);
    const back = await browser.get(`${location.pathname}${location.search}`);
    expect(back.headers.location).toBe('/signin/providers/continue');
    return { location, continued: (await browser.get('/signin/providers/continue')).body };
  }

  it("carries the person's name and address on sealed: the URL the browser keeps in its history holds neither", async () => {
    const { location, continued } = await formPostWalk('ann');
    expect(location.search).not.toMatch(/Ann|Orchard|privaterelay/);
    expect(location.searchParams.get('user')).toMatch(/^v1\./);
    expect(continued).toContain('Ann Orchard');
  });

  it('takes no name from a user field stated in plain in the callback URL', async () => {
    const { continued } = await formPostWalk('bob', (location, user) =>
      location.searchParams.set('user', user),
    );
    expect(continued).not.toContain('Bob Orchard');
  });

  it('asks for form_post, signs its client secret with the operator key, and names the account from the first answer', async () => {
    apple.nextAccount = 'jane';
    const browser = new Browser(t.app);
    const back = await throughProvider(browser, 'apple');
    expect(back.headers.location).toBe('/signin/providers/continue');
    const authorize = apple.requests.find((request) => request.path === '/auth/authorize');
    expect(authorize?.params).toMatchObject({ response_mode: 'form_post', scope: 'openid name email' });
    const page = await createAccount(browser, 'jane_a');
    // The name came only in the form post's `user` field.
    expect(page.body).toContain('Jane Appleseed');
    expect(page.body).toContain('value="jane_appleseed"');
    const user = await t.database.db
      .selectFrom('users')
      .select(['email', 'email_verified'])
      .where('username', '=', 'jane_a')
      .executeTakeFirstOrThrow();
    // Apple's `email_verified` is the string "true".
    expect(user).toEqual({ email: 'jane@privaterelay.appleid.com', email_verified: true });

    // The next sign-in carries no name, and needs none: the subject finds the account.
    const later = new Browser(t.app);
    expect((await throughProvider(later, 'apple')).headers.location).toBe('/account');
  });
});
