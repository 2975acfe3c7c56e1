import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../../src/modules/mfa/totp-code.js';
import { ROLLUP_NAMES, rollups } from '../../../src/modules/rollups/rollup-recorder.js';
import { readSeries } from '../../../src/modules/rollups/rollups.service.js';
import { credit } from '../../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../../helpers/factories.js';
import { authorizeUrl, basic, postForm } from '../../helpers/http.js';
import { officialAppOn } from '../../helpers/mobile-app.js';
import { insertAccessToken } from '../../helpers/tokens.js';
import { makeTotpUser } from '../../helpers/totp.js';

/*
 * What the counting hooks count, through the real routes: sign-ins through the page, a failed
 * second step, a code and its exchange, a refresh, the mobile sign-in, a wallet charge, a 429. The
 * process's recorder is flushed into this file's database and read back as the dashboard reads it.
 */

let t: TestApp;
let client: TestClient;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t, { wallet: true });
  user = await makeUser(t);
});
afterAll(() => t.close());

beforeEach(async () => {
  // Counts of other apps in this process (other test files run in it too) are not this test's.
  rollups.take();
  await t.database.db.deleteFrom('metric_rollups').execute();
});

/** What the recorder counted since the test began, by `name` or `name:key`, zeros left out. */
async function counted(db = t.database.db): Promise<Record<string, number>> {
  await rollups.flush(db);
  const now = Date.now();
  const points = await readSeries(db, {
    names: ROLLUP_NAMES,
    from: new Date(now - 3_600_000),
    to: new Date(now + 3_600_000),
    bucketMinutes: 120,
  });
  const totals: Record<string, number> = {};
  for (const { name, key, value } of points) {
    const id = key === '' ? name : `${name}:${key}`;
    totals[id] = (totals[id] ?? 0) + value;
  }
  return totals;
}

describe('sign-ins', () => {
  it('through the page count sign_ins_ok, and a wrong password sign_ins_failed and a 4xx page', async () => {
    await new Browser(t.app).signIn(user);
    const wrong = await new Browser(t.app).submit('/signin', '/signin', {
      username: user.username,
      password: 'not the password',
    });
    expect(wrong.statusCode).toBe(401);
    expect(await counted()).toEqual({ sign_ins_ok: 1, sign_ins_failed: 1, 'http_4xx:pages': 1 });
  });

  it('count a wrong second-step code as a second-factor failure', async () => {
    const { user: owner, key } = await makeTotpUser(t);
    const browser = new Browser(t.app);
    await browser.signIn(owner);
    const wrongCode = totpCodeAt(key, new Date(t.clock.now().getTime() + 10 * 60_000));
    const step = await browser.submit('/signin/second-factor', '/signin/second-factor', { code: wrongCode });
    expect(step.statusCode).toBe(401);
    expect(await counted()).toMatchObject({ sign_ins_ok: 1, second_factor_failures: 1 });
  });

  it('through the mobile app count tokens once, for the official app too', async () => {
    const verify = await officialAppOn(t);
    const res = await verify('device-1', user.username, user.password);
    expect(res.statusCode).toBe(200);
    const totals = await counted();
    expect(totals).toMatchObject({ sign_ins_ok: 1, tokens_issued: 1 });
    expect(Object.entries(totals).filter(([id]) => id.startsWith('tokens_issued:'))).toHaveLength(1);
  });
});

describe('the authorization code flow', () => {
  it('counts the code, the tokens (in total and for the client) and a refresh', async () => {
    const browser = new Browser(t.app);
    const start = await browser.get(authorizeUrl(client, { scope: 'openid offline_access' }));
    const resume = (await browser.signIn(user, start.headers.location as string)).headers.location as string;
    const page = await browser.get(resume);
    const decision = await browser.post('/api/v1/oauth/authorize/decision', {
      ...hiddenFields(page.body, '/api/v1/oauth/authorize/decision'),
      decision: 'allow',
    });
    const code = new URL(decision.headers.location as string).searchParams.get('code') as string;
    const token = (body: Record<string, string>) =>
      postForm(t.app, '/api/v1/oauth/token', body, { authorization: basic(client) });
    const tokens = await token({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri });
    expect(tokens.statusCode).toBe(200);
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.json().refresh_token,
    });
    expect(refreshed.statusCode).toBe(200);
    expect(await counted()).toEqual({
      sign_ins_ok: 1,
      codes_issued: 1,
      [`codes_issued:${client.clientId}`]: 1,
      tokens_issued: 2,
      [`tokens_issued:${client.clientId}`]: 2,
      [`token_requests:${client.clientId}|ok`]: 2,
      refreshes: 1,
    });
  });
});

describe('the wallet', () => {
  it('counts a charge and its coins, and not its replay', async () => {
    const buyer = await makeUser(t);
    await credit(
      t.database.db,
      { config: t.config, clock: t.clock },
      { username: buyer.username, amount: 10 },
    );
    const bearer = await insertAccessToken(t.database.db, {
      userId: buyer.id,
      clientId: client.clientId,
      scopes: ['openid', 'wallet'],
      clock: t.clock,
    });
    const charge = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/wallet/charge',
        headers: { authorization: `Bearer ${bearer}` },
        payload: { amount: 2.5, currency: 'COIN', description: 'A sword', idempotency_key: 'order-1' },
      });
    expect((await charge()).statusCode).toBe(201);
    expect((await charge()).statusCode).toBe(200);
    expect(await counted()).toEqual({ charges: 1, charged_minor_units: 250 });
  });
});

describe('refused answers', () => {
  it('count a 429 by its route class, as a 4xx too', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_TOKEN_PER_MIN: '1' } });
    try {
      const site = await makeClient(limited);
      rollups.take();
      const ask = () =>
        postForm(
          limited.app,
          '/api/v1/oauth/token',
          { grant_type: 'authorization_code', code: 'ac_unknown', redirect_uri: site.redirectUri },
          { authorization: basic(site) },
        );
      expect((await ask()).statusCode).toBe(400);
      expect((await ask()).statusCode).toBe(429);
      expect(await counted(limited.database.db)).toEqual({
        'http_4xx:oauth': 2,
        'http_429:oauth': 1,
        // The refused exchange is the client's outcome too; the 429 came before the client was known.
        [`token_requests:${site.clientId}|invalid_grant`]: 1,
      });
    } finally {
      await limited.close();
    }
  });
});
