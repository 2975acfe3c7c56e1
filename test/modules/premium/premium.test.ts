import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../../src/modules/accounts/accounts.service.js';
import { createClient } from '../../../src/modules/clients/clients.service.js';
import { grantPremium } from '../../../src/modules/premium/premium.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { depsOf } from '../../helpers/factories.js';
import { insertAccessToken } from '../../helpers/tokens.js';

/*
 * GET /api/v1/premium/status and grantPremium: premium
 * is a history of periods; a grant starts when the running period ends, or now.
 */

const DAY = 24 * 3600 * 1000;
const START = '2026-06-01T12:00:00Z';

let t: TestApp;
let clientId: string;
let userCount = 0;

beforeAll(async () => {
  t = await createTestApp();
  const client = await createClient(t.database.db, depsOf(t).ctx, {
    name: 'Shop',
    siteUrl: 'https://shop.example',
    redirectUris: ['https://shop.example/cb'],
  });
  clientId = client.client_id;
});
afterAll(() => t.close());

/** A fresh user for one scenario; the clock is back at START. */
async function newUser(): Promise<{ id: number; username: string }> {
  t.clock.set(START);
  userCount += 1;
  const username = `premium_user_${userCount}`;
  const user = await createUser(
    t.database.db,
    { config: t.config, clock: t.clock },
    {
      username,
      password: 'correct horse battery staple',
    },
  );
  return { id: user.id, username };
}

/** The status as the user's own token (minted at the current clock, scope openid only) reads it. */
async function status(userId: number, url = '/api/v1/premium/status') {
  const token = await insertAccessToken(t.database.db, {
    userId,
    clientId,
    scopes: ['openid'],
    clock: t.clock,
  });
  const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  return res.json() as Record<string, unknown>;
}

const grant = (username: string, period: 'month' | 'year', days: number) =>
  grantPremium(t.database.db, { config: t.config, clock: t.clock }, { username, period, days });

describe('GET /api/v1/premium/status', () => {
  it('refuses a request without a token (401)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/premium/status' });
    expectApiError(res, 401, 'unauthorized');
  });

  it('refuses an unknown token (401 invalid_token)', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/premium/status',
      headers: { authorization: 'Bearer at_not_a_real_token' },
    });
    expectApiError(res, 401, 'invalid_token');
  });

  it('never premium: nulls, inactive, 0 days, wallet 0', async () => {
    const user = await newUser();
    expect(await status(user.id)).toEqual({
      ok: true,
      active: false,
      expires_at: null,
      billing_period: null,
      days_left: 0,
      wallet_balance: 0,
    });
  });

  it('active: exact UTC date format, days_left rounded up to whole days', async () => {
    const user = await newUser();
    const granted = await grant(user.username, 'month', 30);
    const expected = {
      ok: true,
      active: true,
      expires_at: '2026-07-01 12:00:00',
      billing_period: 'month',
      days_left: 30,
      wallet_balance: 0,
    };
    expect(granted).toEqual(expected);
    const body = await status(user.id);
    expect(body).toEqual(expected);
    expect(body.expires_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    t.clock.advance(1000); // 30 days minus 1 second left
    expect(await status(user.id)).toMatchObject({ active: true, days_left: 30 });
    t.clock.advance(DAY); // 29 days minus 1 second
    expect(await status(user.id)).toMatchObject({ active: true, days_left: 29 });
    t.clock.set('2026-07-01T11:59:59Z'); // 1 second left
    expect(await status(user.id)).toMatchObject({
      active: true,
      days_left: 1,
      expires_at: '2026-07-01 12:00:00',
    });
  });

  it('expired: inactive, 0 days, expires_at still the past end', async () => {
    const user = await newUser();
    await grant(user.username, 'year', 365);
    t.clock.set('2027-06-01T12:00:00Z'); // the end itself: no longer within the period
    expect(await status(user.id)).toEqual({
      ok: true,
      active: false,
      expires_at: '2027-06-01 12:00:00',
      billing_period: 'year',
      days_left: 0,
      wallet_balance: 0,
    });
  });

  it('formats in UTC and drops fractions of a second', async () => {
    const user = await newUser();
    t.clock.set('2026-12-31T23:30:05.789+02:00');
    const granted = await grant(user.username, 'month', 1);
    expect(granted.expires_at).toBe('2027-01-01 21:30:05');
  });

  it('extended while active: the second grant adds to the end', async () => {
    const user = await newUser();
    await grant(user.username, 'month', 30);
    t.clock.advance(10 * DAY);
    const extended = await grant(user.username, 'year', 365);
    // 20 days left + 365 days.
    expect(extended).toMatchObject({
      active: true,
      expires_at: '2027-07-01 12:00:00',
      billing_period: 'year',
      days_left: 385,
    });
    expect(await status(user.id)).toEqual(extended);
  });

  it('granted after expiry: the new period starts now', async () => {
    const user = await newUser();
    await grant(user.username, 'month', 30);
    t.clock.set('2026-08-15T08:00:00Z');
    expect(await status(user.id)).toMatchObject({
      active: false,
      days_left: 0,
      expires_at: '2026-07-01 12:00:00',
    });
    const renewed = await grant(user.username, 'month', 31);
    expect(renewed).toEqual({
      ok: true,
      active: true,
      expires_at: '2026-09-15 08:00:00',
      billing_period: 'month',
      days_left: 31,
      wallet_balance: 0,
    });
  });

  it("reads only the token owner's status, whatever the query string says", async () => {
    const premium = await newUser();
    const plain = await newUser();
    await grant(premium.username, 'year', 100);
    for (const query of [
      `?user_id=${premium.id}`,
      `?id=${premium.id}`,
      `?username=${premium.username}`,
      `?user=${premium.username}&sub=${premium.id}`,
    ]) {
      expect(await status(plain.id, `/api/v1/premium/status${query}`)).toMatchObject({
        active: false,
        expires_at: null,
      });
    }
    expect(await status(premium.id, `/api/v1/premium/status?user_id=${plain.id}`)).toMatchObject({
      active: true,
      days_left: 100,
    });
  });
});

describe('grantPremium', () => {
  it('refuses an unknown user, a bad period and days outside 1–3660', async () => {
    await expect(grant('nobody_here', 'month', 1)).rejects.toMatchObject({
      status: 404,
      description: 'no user named nobody_here',
    });
    const user = await newUser();
    for (const input of [
      { period: 'week', days: 7 },
      { period: 'month', days: 0 },
      { period: 'month', days: 3661 },
      { period: 'month', days: 1.5 },
    ]) {
      await expect(
        grantPremium(
          t.database.db,
          { config: t.config, clock: t.clock },
          {
            username: user.username,
            ...(input as { period: 'month'; days: number }),
          },
        ),
      ).rejects.toMatchObject({ status: 400, error: 'invalid_request' });
    }
    expect(await grant(user.username, 'year', 3660)).toMatchObject({ days_left: 3660 });
  });

  it('chains 10 concurrent one-day grants: they end exactly 10 days later', async () => {
    const user = await newUser();
    const results = await Promise.all(Array.from({ length: 10 }, () => grant(user.username, 'month', 1)));
    expect(results.map((r) => r.days_left).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await status(user.id)).toMatchObject({
      active: true,
      expires_at: '2026-06-11 12:00:00',
      days_left: 10,
    });
    const periods = await t.database.db
      .selectFrom('premium_periods')
      .select(['starts_at', 'ends_at'])
      .where('user_id', '=', user.id)
      .orderBy('starts_at')
      .execute();
    expect(periods).toHaveLength(10);
    periods.forEach((period, index) => {
      expect(period.starts_at.getTime()).toBe(new Date(START).getTime() + index * DAY);
      expect(period.ends_at.getTime() - period.starts_at.getTime()).toBe(DAY);
    });
  });
});
