import { randomInt } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { DEFAULT_AVATAR_PATH } from '../../src/modules/profiles/profile.presenter.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import { Browser, hiddenFields } from '../helpers/browser.js';
import { testRedisUrl } from '../helpers/database.js';
import { depsOf, makeUser, type TestUser } from '../helpers/factories.js';

/*
 * Limits that strangers cannot spend (README "Rate limits"): the per-account count starts after
 * the CSRF check, a browser holding the account's device cookie has its own, the account forms
 * count the session's user; per address only refused forms and costly work count, not page
 * loads, passkey options or static files; a public client's limit is per client and address, and
 * its refused grants count against the address. In memory, and through Redis when there is one.
 */

/** A fresh address per scenario, so counters (also those left in Redis by earlier runs) never mix. */
const newIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

/** A browser (cookies kept) whose requests all come from `ip`. */
function browserAt(app: FastifyInstance, ip: string): Browser {
  const fromIp = {
    inject: (options: Record<string, unknown>) => app.inject({ ...options, remoteAddress: ip }),
  };
  return new Browser(fromIp as unknown as FastifyInstance);
}

/** Posts the sign-in form of the browser's own page (its CSRF token) with these credentials. */
async function signIn(browser: Browser, username: string, password: string): Promise<LightMyRequestResponse> {
  const page = await browser.get('/signin');
  expect(page.statusCode).toBe(200);
  return browser.post('/signin', { ...hiddenFields(page.body, '/signin'), username, password });
}

/** A sign-in form POST without a CSRF token, as any page on the web can send. */
function tokenless(app: FastifyInstance, username: string, ip: string) {
  return app.inject({
    method: 'POST',
    url: '/signin',
    remoteAddress: ip,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ username, password: 'a guess', csrf_token: 'x' }).toString(),
  });
}

const stores = [
  { name: 'in memory', env: {} as Record<string, string> },
  ...(testRedisUrl ? [{ name: 'through Redis', env: { REDIS_URL: testRedisUrl } }] : []),
];

describe.each(stores)('$name', ({ env }) => {
  describe('the per-account limit (3 a minute here)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({
        env: {
          ...env,
          RATE_LIMIT_PUBLIC_PER_MIN: '1000',
          RATE_LIMIT_SIGNIN_PER_MIN: '3',
          RATE_LIMIT_ACCOUNT_PER_MIN: '3',
        },
      });
    });
    afterAll(() => t.close());

    it('is not spent by token-less POSTs: the owner signs in after ten of them', async () => {
      const owner = await makeUser(t);
      const attacker = newIp();
      for (let i = 0; i < 10; i++) {
        const res = await tokenless(t.app, owner.username, attacker);
        // Refused by the CSRF check (403), then by the attacker's own address's limit (429).
        expect([403, 429]).toContain(res.statusCode);
      }
      const res = await signIn(browserAt(t.app, newIp()), owner.username, owner.password);
      expect(res.statusCode).toBe(303);
    });

    it("gives the browser holding the account's device cookie a bucket of its own", async () => {
      const owner = await makeUser(t);
      const ownBrowser = browserAt(t.app, newIp());
      expect((await signIn(ownBrowser, owner.username, owner.password)).statusCode).toBe(303);
      expect(
        (await ownBrowser.post('/signout', hiddenFields((await ownBrowser.get('/account')).body, '/signout')))
          .statusCode,
      ).toBe(303);
      // A stranger with real CSRF tokens, from two addresses: the name's shared bucket fills up.
      for (const _ of [0, 1]) {
        const res = await signIn(browserAt(t.app, newIp()), owner.username, 'a guess');
        expect(res.statusCode).toBe(401);
      }
      const stranger = await signIn(browserAt(t.app, newIp()), owner.username, 'another guess');
      expect(stranger.statusCode).toBe(429);
      // The owner's remembered browser still signs in; a browser without the cookie waits.
      expect((await signIn(ownBrowser, owner.username, owner.password)).statusCode).toBe(303);
      expect((await signIn(browserAt(t.app, newIp()), owner.username, owner.password)).statusCode).toBe(429);
    });

    describe("an account form's limit (/account/password)", () => {
      /**
       * Signs `user` in; answers a poster of the password form with its hidden username changed,
       * each from a fresh address, so that only a per-account count can answer 429.
       */
      async function passwordForm(user: TestUser) {
        const browser = browserAt(t.app, newIp());
        expect((await signIn(browser, user.username, user.password)).statusCode).toBe(303);
        const form = hiddenFields((await browser.get('/account/password')).body, '/account/password');
        const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
        return (username: string) =>
          t.app.inject({
            method: 'POST',
            url: '/account/password',
            remoteAddress: newIp(),
            headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
            payload: new URLSearchParams({
              ...form,
              username,
              current_password: 'wrong guess',
              new_password: 'a brand new passphrase',
              password_confirm: 'a brand new passphrase',
            }).toString(),
          });
      }

      it("is the session's user's: another name in the hidden field does not move it", async () => {
        const user = await makeUser(t);
        const post = await passwordForm(user);
        for (let i = 0; i < 3; i++)
          expect((await post(`someone_${i}_${randomInt(1e6)}`)).statusCode).not.toBe(429);
        expect((await post(`someone_else_${randomInt(1e6)}`)).statusCode).toBe(429);
      });

      it("cannot spend another account's limit by naming it", async () => {
        const attacker = await makeUser(t);
        const victim = await makeUser(t);
        const post = await passwordForm(attacker);
        for (let i = 0; i < 4; i++) expect((await post(victim.username)).statusCode).not.toBe(303);
        expect((await signIn(browserAt(t.app, newIp()), victim.username, victim.password)).statusCode).toBe(
          303,
        );
      });
    });

    it("is not the mobile verify's: its database budget bounds the guesses, after the device signature", async () => {
      const owner = await makeUser(t);
      for (let i = 0; i < 6; i++) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/mobile/verify',
          remoteAddress: newIp(),
          payload: { client_id: 'pk_any', device_id: 'device-0001', username: owner.username, password: 'x' },
        });
        expect(res.statusCode).not.toBe(429);
      }
      expect((await signIn(browserAt(t.app, newIp()), owner.username, owner.password)).statusCode).toBe(303);
    });
  });

  describe('per address, refusals and costly work count, not page loads', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({
        env: {
          ...env,
          RATE_LIMIT_PUBLIC_PER_MIN: '25',
          RATE_LIMIT_SIGNIN_PER_MIN: '3',
          RATE_LIMIT_ACCOUNT_PER_MIN: '3',
        },
      });
    });
    afterAll(() => t.close());

    /** The stylesheet, the scripts and the default avatar the sign-in page links to. */
    async function staticFiles(browser: Browser): Promise<string[]> {
      const page = await browser.get('/signin');
      const linked = [...page.body.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
      expect(linked.length).toBeGreaterThanOrEqual(3);
      return [...linked, DEFAULT_AVATAR_PATH];
    }

    it('many page loads, passkey options and static files from one address do not block a right password', async () => {
      const user = await makeUser(t);
      const ip = newIp();
      const browser = browserAt(t.app, ip);
      const files = await staticFiles(browser);
      let csrf = '';
      for (let i = 0; i < 10; i++) {
        const page = await browser.get('/signin');
        expect(page.statusCode).toBe(200);
        csrf = hiddenFields(page.body, '/signin').csrf_token as string;
        const options = await t.app.inject({
          method: 'POST',
          url: '/signin/passkey/options',
          remoteAddress: ip,
          headers: { cookie: [...browser.cookies].map(([n, v]) => `${n}=${v}`).join('; ') },
          payload: { csrf_token: csrf },
        });
        expect(options.statusCode).toBe(200);
        for (const file of files) expect((await browser.get(file)).statusCode).toBe(200);
      }
      const res = await browser.post('/signin', {
        csrf_token: csrf,
        username: user.username,
        password: user.password,
      });
      expect(res.statusCode).toBe(303);
    });

    it('failures still do: three wrong passwords, then even the right one waits', async () => {
      const user = await makeUser(t);
      const browser = browserAt(t.app, newIp());
      for (let i = 0; i < 3; i++) {
        const other = await makeUser(t);
        expect((await signIn(browser, other.username, 'a wrong password')).statusCode).toBe(401);
      }
      const res = await signIn(browser, user.username, user.password);
      expect(res.statusCode).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('the passkey endpoints answer 429 rate_limited in JSON with Retry-After past the limit', async () => {
      const ip = newIp();
      for (let i = 0; i < 3; i++) expect((await tokenless(t.app, 'someone', ip)).statusCode).toBe(403);
      const res = await t.app.inject({
        method: 'POST',
        url: '/signin/passkey/options',
        remoteAddress: ip,
        payload: { csrf_token: 'x' },
      });
      expectApiError(res, 429, 'rate_limited');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('every sign-up counts, even a successful one', async () => {
      const browser = browserAt(t.app, newIp());
      const signUp = async () => {
        const form = await browser.get('/signup');
        return browser.post('/signup', {
          ...hiddenFields(form.body, '/signup'),
          username: `new_${randomInt(1e9)}`,
          password: 'a long enough passphrase',
        });
      };
      for (let i = 0; i < 3; i++) expect((await signUp()).statusCode).toBe(303);
      expect((await signUp()).statusCode).toBe(429);
    });
  });

  describe('public clients at the token endpoint', () => {
    let t: TestApp;
    let publicClientId: string;
    const newPublicClient = async () =>
      (
        await createClient(t.database.db, depsOf(t).ctx, {
          name: 'Phone app',
          siteUrl: 'https://app.example',
          redirectUris: ['https://app.example/cb'],
          isPublic: true,
        })
      ).client_id;
    beforeAll(async () => {
      t = await createTestApp({
        env: { ...env, RATE_LIMIT_TOKEN_PER_MIN: '3', RATE_LIMIT_FAILED_AUTH_PER_MIN: '5' },
      });
      publicClientId = await newPublicClient();
    });
    afterAll(() => t.close());

    const junkRefresh = (clientId: string, ip: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/oauth/token',
        remoteAddress: ip,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          client_id: clientId,
          grant_type: 'refresh_token',
          refresh_token: `rt_junk_${randomInt(1e9)}`,
        }).toString(),
      });

    it("junk refreshes from one address do not close the client to another address's users", async () => {
      const attacker = newIp();
      const answers = [];
      for (let i = 0; i < 8; i++) answers.push((await junkRefresh(publicClientId, attacker)).statusCode);
      expect(answers).toContain(429);
      expectApiError(await junkRefresh(publicClientId, newIp()), 400, 'invalid_grant');
    });

    it('refused grants (invalid_grant) from one address are refused there past the failed-auth limit', async () => {
      const flooder = newIp();
      // Each from another public client, so that only the address's count can answer 429.
      for (let i = 0; i < 5; i++)
        expectApiError(await junkRefresh(await newPublicClient(), flooder), 400, 'invalid_grant');
      expectApiError(await junkRefresh(await newPublicClient(), flooder), 429, 'rate_limited');
      expectApiError(await junkRefresh(await newPublicClient(), newIp()), 400, 'invalid_grant');
    });
  });
});
