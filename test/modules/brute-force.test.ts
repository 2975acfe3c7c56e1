import { generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../src/modules/accounts/accounts.service.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser } from '../helpers/browser.js';
import { makeUser } from '../helpers/oauth.js';

/*
 * Brute force: every check of an account's password takes a numbered slot in the database first,
 * so at most SIGN_IN_MAX_ATTEMPTS checks run per window, however many arrive in parallel; a locked
 * account answers like a wrong password; the sign-in page and the mobile app share the count.
 */

const WINDOW_SECONDS = 600;
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    env: {
      SIGN_IN_MAX_ATTEMPTS: '3',
      SIGN_IN_WINDOW_SECONDS: String(WINDOW_SECONDS),
      SIGN_IN_SLOWDOWN_MS: '0',
    },
  });
});
afterAll(() => t.close());

const deps = () => ({ db: t.database.db, clock: t.clock, config: t.config });

async function signInPage(username: string, password: string): Promise<string> {
  const browser = new Browser(t.app);
  const res = await browser.submit('/signin', '/signin', { username, password });
  if (res.statusCode === 303) return 'signed in';
  expect(res.statusCode).toBe(401);
  return /Wrong username or password\./.test(res.body) ? 'wrong' : res.body;
}

describe('the sign-in page', () => {
  it('locks an account after the allowed failures, with the answer of a wrong password, until the window ends', async () => {
    const user = await makeUser(t);
    const start = t.clock.now();
    try {
      for (let i = 0; i < 3; i++) expect(await signInPage(user.username, 'wrong password')).toBe('wrong');
      // Locked: even the right password gets the wrong-password answer.
      expect(await signInPage(user.username, user.password)).toBe('wrong');
      t.clock.advance(WINDOW_SECONDS * 1000 - 1000);
      expect(await signInPage(user.username, user.password)).toBe('wrong');
      t.clock.advance(2000);
      expect(await signInPage(user.username, user.password)).toBe('signed in');
    } finally {
      t.clock.set(start);
    }
  });

  it('starts counting again after a successful sign-in', async () => {
    const user = await makeUser(t);
    for (let i = 0; i < 2; i++) expect(await signInPage(user.username, 'wrong password')).toBe('wrong');
    expect(await signInPage(user.username, user.password)).toBe('signed in');
    for (let i = 0; i < 2; i++) expect(await signInPage(user.username, 'wrong password')).toBe('wrong');
    expect(await signInPage(user.username, user.password)).toBe('signed in');
  });

  it('does not lock anyone out through an unknown username', async () => {
    for (let i = 0; i < 5; i++) expect(await signInPage('no_such_user', 'guess')).toBe('wrong');
  });
});

describe('parallel guesses', () => {
  it('are counted one by one: 20 at once take 20 numbered slots, and the account ends locked', async () => {
    const user = await makeUser(t);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => authenticate(deps(), user.username, `guess ${i}`)),
    );
    expect(results.every((result) => !result.ok)).toBe(true);
    const row = await t.database.db
      .selectFrom('sign_in_attempts')
      .select('attempts')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBe(20);
    expect(await authenticate(deps(), user.username, user.password)).toEqual({
      ok: false,
      reason: 'wrong_credentials',
    });
  });

  it('never let more than the allowed checks through, even with the right password among them', async () => {
    const user = await makeUser(t);
    // Three wrong guesses use up the window; then the right password arrives in parallel with more.
    for (let i = 0; i < 3; i++) await authenticate(deps(), user.username, `guess ${i}`);
    const results = await Promise.all([
      authenticate(deps(), user.username, user.password),
      ...Array.from({ length: 5 }, (_, i) => authenticate(deps(), user.username, `late ${i}`)),
    ]);
    expect(results.filter((result) => result.ok)).toHaveLength(0);
  });
});

describe('the mobile app shares the count', () => {
  it('wrong passwords through mobile verify lock the sign-in page too', async () => {
    const user = await makeUser(t);
    const app = await createClient(t.database.db, t.clock, {
      name: 'Official app',
      siteUrl: 'https://id.example',
      redirectUris: ['https://id.example/app'],
      officialMobile: true,
    });
    const deviceId = 'brute-force-device';
    const keys = generateKeyPairSync('ed25519');
    for (let i = 0; i < 3; i++) {
      const challenge = (
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/mobile/challenge',
          payload: { client_id: app.client_id, device_id: deviceId },
        })
      ).json().challenge as string;
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/mobile/verify',
        payload: {
          client_id: app.client_id,
          device_id: deviceId,
          challenge,
          signature: sign(null, Buffer.from(`${challenge}.${deviceId}`), keys.privateKey).toString(
            'base64url',
          ),
          public_key: keys.publicKey.export({ format: 'jwk' }).x,
          username: user.username,
          password: 'wrong password',
        },
      });
      expect(res.json()).toMatchObject({ error: 'invalid_grant' });
    }
    expect(await signInPage(user.username, user.password)).toBe('wrong');
  });
});

describe('slowing down', () => {
  it('answers failures after the third more slowly', async () => {
    const slow = await createTestApp({
      database: undefined,
      env: { SIGN_IN_MAX_ATTEMPTS: '10', SIGN_IN_SLOWDOWN_MS: '300' },
    });
    try {
      const user = await makeUser(slow);
      const slowDeps = { db: slow.database.db, clock: slow.clock, config: slow.config };
      for (let i = 0; i < 3; i++) await authenticate(slowDeps, user.username, 'wrong');
      const started = performance.now();
      await authenticate(slowDeps, user.username, 'wrong');
      await authenticate(slowDeps, user.username, 'wrong');
      // The 4th failure waits 300 ms, the 5th 600 ms: a lower bound, whatever the machine.
      expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      await slow.close();
    }
  });
});
