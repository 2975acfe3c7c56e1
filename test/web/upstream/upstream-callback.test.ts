import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeProvider } from '../../../src/modules/upstream/providers.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { depsOf, makeClient } from '../../helpers/factories.js';
import { authorizeUrl } from '../../helpers/http.js';
import type { OidcStandIn } from '../../helpers/upstream/oidc-standin.js';
import { CLIENT, oidcProvider, throughProvider } from '../../helpers/upstream-flow.js';

/*
 * The callback under attack and under a failing provider: forged, replayed and foreign states,
 * huge and odd parameters (a property run), a provider that is down, answers garbage, refuses, or
 * names another issuer (RFC 9207). Whatever arrives, no session is made from it, the answer is a
 * page that says which provider failed and what to do, and nothing is a 500.
 */
let t: TestApp;
let provider: OidcStandIn;
let down: OidcStandIn;

beforeAll(async () => {
  t = await createTestApp();
  t.clock.set(new Date());
  const accounts = { ada: { sub: 'sub-ada', preferred_username: 'ada' } };
  provider = await oidcProvider(t, accounts);
  down = await oidcProvider(t, accounts, { name: 'gone' });
  await down.stop();
});

afterAll(async () => {
  await provider?.stop();
  await t?.close();
});

/** Starts a trip in `browser` and returns the provider's answer, not yet brought back. */
async function startedTrip(browser: Browser): Promise<URL> {
  const page = await browser.get('/signin');
  const started = await browser.post(
    '/signin/providers/oidc',
    hiddenFields(page.body, '/signin/providers/oidc'),
  );
  expect(started.statusCode).toBe(303);
  const atProvider = await fetch(started.headers.location as string, { redirect: 'manual' });
  return new URL(atProvider.headers.get('location') as string);
}

const sessionMade = (browser: Browser) => browser.cookies.has('idp_session');

describe('the callback', () => {
  it('is taken once: a replayed answer is refused, as is one in a browser that did not start the trip', async () => {
    const browser = new Browser(t.app);
    const answer = await startedTrip(browser);
    const path = `${answer.pathname}${answer.search}`;
    // Another browser with the answer (a stolen or planted link: login CSRF) gets nothing.
    const stranger = new Browser(t.app);
    const foreign = await stranger.get(path);
    expect(foreign.statusCode).toBe(400);
    expect(foreign.body).toContain('started in another browser');
    expect(sessionMade(stranger)).toBe(false);
    // The browser that started it still can, once.
    const cookies = new Map(browser.cookies);
    expect((await browser.get(path)).statusCode).toBe(303);
    const replay = new Browser(t.app);
    for (const [name, value] of cookies) replay.cookies.set(name, value);
    expect((await replay.get(path)).statusCode).toBe(400);
  });

  it("refuses an answer naming another issuer than the provider's (RFC 9207 mix-up)", async () => {
    const browser = new Browser(t.app);
    const answer = await startedTrip(browser);
    answer.searchParams.set('iss', 'https://attacker.example');
    const res = await browser.get(`${answer.pathname}${answer.search}`);
    expect(res.statusCode).toBe(502);
    expect(res.body).toContain('Example ID answered something we could not check');
    expect(sessionMade(browser)).toBe(false);
  });

  it('says which provider failed: down, garbage at the token endpoint, or a refusal in its own words', async () => {
    const gone = await throughProvider(new Browser(t.app), 'gone');
    expect(gone.statusCode).toBe(502);
    expect(gone.body).toContain('Example ID did not answer');

    provider.misbehave('garbage');
    const garbage = await throughProvider(new Browser(t.app), 'oidc');
    expect(garbage.statusCode).toBe(502);
    expect(garbage.body).toContain('answered something we could not check');
    const failed = await t.database.db
      .selectFrom('audit_events')
      .select(['subject', 'details'])
      .where('action', '=', 'upstream_sign_in_failed')
      .execute();
    expect(failed).toContainEqual(
      expect.objectContaining({
        subject: 'provider:oidc',
        details: expect.objectContaining({
          reason: 'invalid_response',
          detail: 'unexpected response content-type',
        }),
      }),
    );

    provider.misbehave('error');
    const refused = await throughProvider(new Browser(t.app), 'oidc');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Example ID did not sign you in');
    expect(refused.body).toContain('access_denied');
    provider.misbehave(null);

    // And after all that, the provider works again.
    const browser = new Browser(t.app);
    expect((await throughProvider(browser, 'oidc')).headers.location).toBe('/signin/providers/continue');
  });

  it('answers any parameters with a page and no session (property run)', async () => {
    const value = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.constantFrom('', '%00', 'a'.repeat(5000), '<script>alert(1)</script>', 'access_denied'),
    );
    const query = fc.dictionary(
      fc.constantFrom('code', 'state', 'iss', 'error', 'error_description', 'user', 'x'),
      value,
      {
        maxKeys: 6,
      },
    );
    // Half the runs come from a browser holding a live trip: a forged state must still fail there.
    const browser = new Browser(t.app);
    await startedTrip(browser);
    await fc.assert(
      fc.asyncProperty(
        query,
        fc.boolean(),
        fc.constantFrom('GET', 'POST'),
        async (params, withTrip, method) => {
          const client = withTrip ? browser : new Browser(t.app);
          const encoded = new URLSearchParams(params).toString();
          const res =
            method === 'GET'
              ? await client.get(`/signin/providers/oidc/callback?${encoded}`)
              : await client.post('/signin/providers/oidc/callback', params);
          if (method === 'POST' && res.statusCode === 303) {
            // Apple's form_post is sent on as a GET; follow it as the browser would.
            const followed = await client.get(res.headers.location as string);
            expect([400, 403, 502]).toContain(followed.statusCode);
          } else expect([400, 403, 502]).toContain(res.statusCode);
          expect(res.statusCode).toBeLessThan(500);
          expect(res.body).not.toContain('<script>alert(1)</script>');
          expect(sessionMade(client)).toBe(false);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("keeps the provider's own refusal of the exchange for operators (a wrong client secret)", async () => {
    const { db, ctx } = depsOf(t);
    await changeProvider(db, ctx, { name: 'oidc', clientSecret: 'not-the-secret' }, 'cli');
    const res = await throughProvider(new Browser(t.app), 'oidc');
    expect(res.statusCode).toBe(502);
    const failed = await t.database.db
      .selectFrom('audit_events')
      .select('details')
      .where('action', '=', 'upstream_sign_in_failed')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(String((failed.details as { detail: string }).detail)).toMatch(/^invalid_client/);
    await changeProvider(db, ctx, { name: 'oidc', clientSecret: CLIENT.clientSecret }, 'cli');
  });

  it('signs nobody in through a provider disabled while the trip was under way, nor starts one', async () => {
    const browser = new Browser(t.app);
    const answer = await startedTrip(browser);
    const { db, ctx } = depsOf(t);
    await changeProvider(db, ctx, { name: 'oidc', enabled: false }, 'cli');
    try {
      const res = await browser.get(`${answer.pathname}${answer.search}`);
      expect(res.statusCode).toBe(400);
      expect(sessionMade(browser)).toBe(false);
      const page = await browser.get('/signin');
      expect(page.body).not.toContain('/signin/providers/oidc');
      const started = await browser.post('/signin/providers/oidc', hiddenFields(page.body, '/signin'));
      expect(started.statusCode).toBe(404);
      expect(started.body).toContain('not offered here');
    } finally {
      await changeProvider(db, ctx, { name: 'oidc', enabled: true }, 'cli');
    }
  });

  it("admits the provider's authorization endpoint in the sign-in page's form-action from the first page", async () => {
    const page = await new Browser(t.app).get('/signin');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toMatch(new RegExp(`form-action [^;]*${provider.url.replace(/[.]/g, '\\.')}`));
  });

  it("leads back to the site's request from the problem page, and to the account's pages from theirs", async () => {
    const site = await makeClient(t);
    const browser = new Browser(t.app);
    const signIn = await browser.get(authorizeUrl(site, { scope: 'openid' }));
    provider.misbehave('error');
    try {
      const refused = await throughProvider(browser, 'oidc', { from: signIn.headers.location as string });
      expect(refused.statusCode).toBe(403);
      const request = new URL(signIn.headers.location as string, 'http://x').searchParams.get('request');
      expect(refused.body).toContain(`href="/signin?request=${request}"`);
    } finally {
      provider.misbehave(null);
    }
    const gone = await throughProvider(new Browser(t.app), 'gone', {
      from: '/signin?return_to=%2Faccount%2Fexport',
    });
    expect(gone.body).toContain('href="/signin?return_to=%2Faccount%2Fexport"');
  });
});
