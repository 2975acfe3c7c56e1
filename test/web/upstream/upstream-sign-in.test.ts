import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { makeClient, makeUser } from '../../helpers/factories.js';
import { authorizeUrl, exchangeCode } from '../../helpers/http.js';
import type { OidcStandIn } from '../../helpers/upstream/oidc-standin.js';
import { oidcProvider, throughProvider } from '../../helpers/upstream-flow.js';

/*
 * Sign-in through a generic OpenID provider (an oidc-provider stand-in on loopback), as a browser
 * goes through it: a first sign-in makes an account under a chosen username, a later one finds it
 * by the provider's subject alone, never by a matching address.
 */
let t: TestApp;
let provider: OidcStandIn;

beforeAll(async () => {
  t = await createTestApp();
  // The stand-in checks its tokens against the real time: the service's clock is set to it.
  t.clock.set(new Date());
  provider = await oidcProvider(t, {
    ada: {
      sub: 'sub-ada',
      email: 'ada@example.org',
      email_verified: true,
      name: 'Ada Lovelace',
      preferred_username: 'ada',
    },
    eve: { sub: 'sub-eve', email: 'victim@example.org', email_verified: true, preferred_username: 'eve' },
    unverified: {
      sub: 'sub-unverified',
      email: 'nobody@example.org',
      email_verified: false,
      preferred_username: 'unv',
    },
    newcomer: { sub: 'sub-newcomer', preferred_username: 'newcomer' },
  });
});

afterAll(async () => {
  await provider?.stop();
  await t?.close();
});

async function sessionAmr(userId: number): Promise<string[][]> {
  const rows = await t.database.db
    .selectFrom('browser_sessions')
    .select('amr')
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => row.amr);
}

describe('a first sign-in through an OpenID provider', () => {
  it('sends state, nonce and an S256 PKCE challenge, and asks for a username before making an account', async () => {
    provider.nextAccount = 'ada';
    provider.requests.length = 0;
    const browser = new Browser(t.app);
    const back = await throughProvider(browser, 'oidc');
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe('/signin/providers/continue');
    const authorize = provider.requests.find((request) => request.path.endsWith('/auth'));
    expect(authorize?.params).toMatchObject({ code_challenge_method: 'S256', response_type: 'code' });
    expect(authorize?.params.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize?.params.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize?.params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const page = await browser.get('/signin/providers/continue');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('You signed in at Example ID as ada.');
    expect(page.body).toContain('value="ada"');
    // No session yet: the account does not exist until a username is chosen.
    expect((await browser.get('/account')).statusCode).toBe(302);

    const made = await browser.post('/signin/providers/continue', {
      ...hiddenFields(page.body, '/signin/providers/continue'),
      username: 'ada_l',
    });
    expect(made.statusCode).toBe(303);
    expect(made.headers.location).toBe('/account');
    const user = await t.database.db
      .selectFrom('users')
      .select(['id', 'email', 'email_verified', 'password_hash'])
      .where('username', '=', 'ada_l')
      .executeTakeFirstOrThrow();
    // The provider verified the address: it is taken over, confirmed. No password: none was chosen.
    expect(user).toMatchObject({ email: 'ada@example.org', email_verified: true, password_hash: '!none' });
    expect(await sessionAmr(user.id)).toEqual([['fed']]);
    expect((await browser.get('/account')).statusCode).toBe(200);
  });

  it('signs the same person in later by the subject, with no page in between', async () => {
    provider.nextAccount = 'ada';
    const browser = new Browser(t.app);
    const back = await throughProvider(browser, 'oidc');
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe('/account');
    const account = await browser.get('/account');
    expect(account.body).toContain('ada_l');
  });

  it('never joins an account by a matching address: a provider vouching for it gets the username page', async () => {
    const victim = await makeUser(t, {
      username: 'victim',
      email: 'victim@example.org',
      emailVerified: true,
    });
    provider.nextAccount = 'eve';
    const browser = new Browser(t.app);
    const back = await throughProvider(browser, 'oidc');
    expect(back.headers.location).toBe('/signin/providers/continue');
    expect((await browser.get('/account')).statusCode).toBe(302);
    // Making an account under another name leaves the victim's alone, and the address's claim with it.
    const page = await browser.get('/signin/providers/continue');
    const made = await browser.post('/signin/providers/continue', {
      ...hiddenFields(page.body, '/signin/providers/continue'),
      username: 'eve_new',
    });
    expect(made.statusCode).toBe(303);
    const rows = await t.database.db
      .selectFrom('users')
      .select(['id', 'username', 'email_verified', 'email_claim_withheld'])
      .where('email', '=', 'victim@example.org')
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      { id: victim.id, username: 'victim', email_verified: true, email_claim_withheld: false },
      // Confirmed by the provider, but another account confirmed the address first: no claim.
      expect.objectContaining({ username: 'eve_new', email_claim_withheld: true }),
    ]);
    const links = await t.database.db
      .selectFrom('upstream_links')
      .select('user_id')
      .where('subject', '=', 'sub-eve')
      .execute();
    expect(links.map((link) => link.user_id)).not.toContain(victim.id);
  });

  it('does not take over an address the provider did not verify', async () => {
    provider.nextAccount = 'unverified';
    const browser = new Browser(t.app);
    await throughProvider(browser, 'oidc');
    const page = await browser.get('/signin/providers/continue');
    expect(page.body).toContain('did not confirm your e-mail address');
    const made = await browser.post('/signin/providers/continue', {
      ...hiddenFields(page.body, '/signin/providers/continue'),
      username: 'unv_person',
    });
    expect(made.statusCode).toBe(303);
    const user = await t.database.db
      .selectFrom('users')
      .select(['email'])
      .where('username', '=', 'unv_person')
      .executeTakeFirstOrThrow();
    expect(user.email).toBeNull();
  });

  it('refuses a taken or confusable username by the field, and keeps the identity waiting', async () => {
    await makeUser(t, { username: 'grace' });
    provider.nextAccount = 'newcomer';
    const browser = new Browser(t.app);
    const other = 'newcomer_here';
    await throughProvider(browser, 'oidc');
    const page = await browser.get('/signin/providers/continue');
    for (const [username, text] of [
      ['grace', 'This username is taken'],
      ['grасe', 'Use 3–32 letters'],
      ['admin', 'This username is reserved'],
    ] as const) {
      const refused = await browser.post('/signin/providers/continue', {
        ...hiddenFields(page.body, '/signin/providers/continue'),
        username,
      });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain(text);
    }
    const made = await browser.post('/signin/providers/continue', {
      ...hiddenFields(page.body, '/signin/providers/continue'),
      username: other,
    });
    expect(made.statusCode).toBe(303);
    // Taken once: the same form again makes no second account.
    const again = await browser.post('/signin/providers/continue', {
      ...hiddenFields(page.body, '/signin/providers/continue'),
      username: `${other}_2`,
    });
    expect(again.statusCode).not.toBe(303);
    const second = await t.database.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', `${other}_2`)
      .execute();
    expect(second).toEqual([]);
  });
});

describe("a site's sign-in through a provider", () => {
  it('resumes the authorization request after the provider, and the id_token says amr fed', async () => {
    const site = await makeClient(t);
    provider.nextAccount = 'ada';
    const browser = new Browser(t.app);
    const signIn = await browser.get(authorizeUrl(site, { scope: 'openid', nonce: 'n-1' }));
    expect(signIn.statusCode).toBe(302);
    const back = await throughProvider(browser, 'oidc', { from: signIn.headers.location as string });
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toMatch(/^\/api\/v1\/oauth\/authorize\/resume\?request=/);
    const consent = await browser.get(back.headers.location as string);
    expect(consent.statusCode, consent.body.slice(0, 200)).toBe(200);
    const decision = '/api/v1/oauth/authorize/decision';
    const allowed = await browser.post(decision, {
      ...hiddenFields(consent.body, decision),
      decision: 'allow',
    });
    const code = new URL(allowed.headers.location as string).searchParams.get('code') as string;
    const { id_token } = (await exchangeCode(t.app, site, code)).json() as { id_token: string };
    const claims = decodeJwt(id_token);
    expect(claims.amr).toEqual(['fed']);
    expect(claims.acr).toBeUndefined();
    expect(claims.nonce).toBe('n-1');
  });
});
