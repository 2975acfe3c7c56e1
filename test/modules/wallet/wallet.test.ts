import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { updateClient } from '../../../src/modules/clients/clients.service.js';
import { revokeAppAccess } from '../../../src/modules/oauth/consents.service.js';
import { credit, verifyLedger } from '../../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { depsOf, makeClient, makeUser, type TestClient } from '../../helpers/oauth.js';
import { insertAccessToken } from '../../helpers/tokens.js';

/*
 * The coin wallet (SPEC.md "Wallet", CONTRACT.md §6): access, balance, charge with idempotency,
 * history, and the books: after every test, every balance equals the sum of its ledger entries.
 */

let t: TestApp;
let shop: TestClient;
let arcade: TestClient;
let plain: TestClient;

beforeAll(async () => {
  t = await createTestApp();
  shop = await makeClient(t, { wallet: true });
  arcade = await makeClient(t, { wallet: true });
  plain = await makeClient(t);
});
afterAll(() => t.close());
afterEach(async () => {
  expect(await verifyLedger(t.database.db)).toMatchObject({ ok: true, mismatches: [] });
});

interface Holder {
  id: number;
  username: string;
  token: string;
}

/** A user with `balance` coins and a wallet-scoped token of `client` (default the shop). */
async function holder(balance: number, client: TestClient = shop): Promise<Holder> {
  const user = await makeUser(t);
  if (balance > 0) await credit(t.database.db, t.clock, user.username, { amount: balance });
  const token = await tokenFor(user.id, client);
  return { id: user.id, username: user.username, token };
}

function tokenFor(userId: number, client: TestClient, scopes = ['openid', 'wallet']): Promise<string> {
  return insertAccessToken(t.database.db, { userId, clientId: client.clientId, scopes, clock: t.clock });
}

let keyCount = 0;
const newKey = () => `order-${++keyCount}`;

function chargeRaw(token: string, payload: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/charge',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload,
  });
}

function charge(token: string, body: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return chargeRaw(token, JSON.stringify(body));
}

const order = (amount: unknown, key = newKey(), extra: Record<string, unknown> = {}) => ({
  amount,
  currency: 'COIN',
  description: 'Sword of testing',
  idempotency_key: key,
  ...extra,
});

async function balanceOf(token: string): Promise<number> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/v1/wallet/balance',
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.statusCode).toBe(200);
  return (res.json() as { balance: number }).balance;
}

async function ledgerCount(userId: number): Promise<number> {
  const row = await t.database.db
    .selectFrom('wallet_transactions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function storedKeys(userId: number): Promise<number> {
  const row = await t.database.db
    .selectFrom('wallet_idempotency_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const ROUTES = [
  { method: 'GET', url: '/api/v1/wallet/balance' },
  { method: 'POST', url: '/api/v1/wallet/charge' },
  { method: 'GET', url: '/api/v1/wallet/transactions' },
] as const;

function call(route: (typeof ROUTES)[number], token?: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: route.method,
    url: route.url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(route.method === 'POST' ? { payload: order(1) } : {}),
  });
}

describe('access', () => {
  it('needs a bearer token: 401 without one, 401 invalid_token for an unknown one', async () => {
    for (const route of ROUTES) {
      const res = await call(route);
      expectApiError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm=/);
      expectApiError(await call(route, 'at_unknown'), 401, 'invalid_token');
    }
  });

  it('answers 401 before looking at a bad body', async () => {
    expectApiError(await chargeRaw('', '{"amount":"x"}'), 401, 'unauthorized');
  });

  it('refuses a token without the wallet scope: 403 access_denied', async () => {
    const user = await holder(10);
    const token = await tokenFor(user.id, shop, ['openid', 'profile']);
    for (const route of ROUTES) expectApiError(await call(route, token), 403, 'access_denied');
    expect(await ledgerCount(user.id)).toBe(1);
  });

  it('refuses a client without the wallet right, even with a wallet-scoped token', async () => {
    const user = await holder(10, plain);
    for (const route of ROUTES) expectApiError(await call(route, user.token), 403, 'access_denied');
  });

  it('stops a client at once when the operator withdraws its wallet right', async () => {
    const outlet = await makeClient(t, { wallet: true });
    const user = await holder(10, outlet);
    expect(await balanceOf(user.token)).toBe(10);
    // The operator's CLI is another process: the change counts once the database announced it.
    await updateClient(t.database.db, depsOf(t).ctx, outlet.clientId, { wallet: false });
    await t.sync();
    for (const route of ROUTES) expectApiError(await call(route, user.token), 403, 'access_denied');
    await updateClient(t.database.db, depsOf(t).ctx, outlet.clientId, { wallet: true });
    await t.sync();
    expect((await charge(user.token, order(1))).statusCode).toBe(201);
  });

  it('stops at once when the user revokes the app', async () => {
    const user = await holder(10);
    expect((await charge(user.token, order(1))).statusCode).toBe(201);
    await revokeAppAccess(t.database.db, { userId: user.id, clientId: shop.clientId, at: t.clock.now() });
    await t.sync();
    for (const route of ROUTES) expectApiError(await call(route, user.token), 401, 'invalid_token');
    expect(await ledgerCount(user.id)).toBe(2);
  });

  it('marks every wallet route bearer in the catalogue', async () => {
    const catalogue = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json() as {
      routes: Array<{ method: string; path: string; auth: string }>;
    };
    for (const route of ROUTES) {
      expect(catalogue.routes).toContainEqual(
        expect.objectContaining({ method: route.method, path: route.url, auth: 'bearer' }),
      );
    }
  });
});

describe('GET /api/v1/wallet/balance', () => {
  it('is 0 before the first top-up and the balance in coins after', async () => {
    const user = await holder(0);
    const empty = await t.app.inject({
      method: 'GET',
      url: '/api/v1/wallet/balance',
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(empty.json()).toEqual({ ok: true, balance: 0, currency: 'COIN' });
    expect(empty.headers['cache-control']).toBe('no-store');
    await credit(t.database.db, t.clock, user.username, { amount: 12.5 });
    expect(await balanceOf(user.token)).toBe(12.5);
  });

  it('is the wallet_balance of the premium status', async () => {
    const user = await holder(7.25);
    const premium = await t.app.inject({
      method: 'GET',
      url: '/api/v1/premium/status',
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(premium.json()).toMatchObject({ wallet_balance: 7.25 });
  });
});

describe('POST /api/v1/wallet/charge', () => {
  it('charges the token user and answers 201 with the transaction and the new balance', async () => {
    const user = await holder(12.5);
    const res = await charge(user.token, order(2.25, 'first-order', { user_id: 1, username: 'someone' }));
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      ok: true,
      transaction: {
        id: expect.stringMatching(/^tx_[A-Za-z0-9_-]{22}$/),
        type: 'charge',
        amount: 2.25,
        currency: 'COIN',
        description: 'Sword of testing',
        status: 'completed',
        balance_after: 10.25,
        idempotency_key: 'first-order',
        created_at: '2026-06-01T12:00:00.000Z',
      },
      balance: 10.25,
    });
    expect(await balanceOf(user.token)).toBe(10.25);
  });

  it('keeps cents exact: three charges of 0.1 empty a balance of 0.3', async () => {
    const user = await holder(0.3);
    for (let i = 0; i < 3; i++) expect((await charge(user.token, order(0.1))).statusCode).toBe(201);
    expect(await balanceOf(user.token)).toBe(0);
    expectApiError(await charge(user.token, order(0.01)), 402, 'insufficient_funds');
  });

  it('charges the whole balance down to exactly 0', async () => {
    const user = await holder(5);
    expect((await charge(user.token, order(5))).json()).toMatchObject({ balance: 0 });
  });

  it('accepts the largest amount', async () => {
    const user = await holder(1_000_000_000);
    const res = await charge(user.token, order(1_000_000_000));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ transaction: { amount: 1_000_000_000 }, balance: 0 });
  });

  const badAmounts: Array<[string, string]> = [
    ['0', '0'],
    ['-1', '-1'],
    ['1.005', '1.005'],
    ['"10" (a string)', '"10"'],
    ['1e400', '1e400'],
    ['null', 'null'],
    ['true', 'true'],
    ['[10]', '[10]'],
    ['{}', '{}'],
    ['above 1,000,000,000', '1000000000.01'],
    ['huge', '1e300'],
    ['1e-7', '1e-7'],
  ];
  it.each(badAmounts)('refuses amount %s with 400 invalid_request and charges nothing', async (_, amount) => {
    const user = await holder(20);
    const key = newKey();
    const payload = `{"amount":${amount},"currency":"COIN","description":"x","idempotency_key":"${key}"}`;
    const res = await chargeRaw(user.token, payload);
    expectApiError(res, 400, 'invalid_request');
    expect(res.json().error_description).toMatch(/amount/);
    expect(await balanceOf(user.token)).toBe(20);
    // The refused request was not stored against its key: the key still works.
    expect(await storedKeys(user.id)).toBe(0);
    expect((await charge(user.token, order(1, key))).statusCode).toBe(201);
  });

  it('refuses a missing amount', async () => {
    const user = await holder(20);
    const { amount: _, ...rest } = order(1);
    expectApiError(await charge(user.token, rest), 400, 'invalid_request');
  });

  it.each([
    ['lowercase', 'coin'],
    ['another currency', 'USD'],
    ['a number', 1],
    ['null', null],
    ['empty', ''],
  ])('refuses currency %s', async (_, currency) => {
    const user = await holder(20);
    const res = await charge(user.token, order(1, newKey(), { currency }));
    expectApiError(res, 400, 'invalid_request');
    expect(res.json().error_description).toMatch(/currency/);
  });

  it('refuses a missing currency', async () => {
    const user = await holder(20);
    const { currency: _, ...rest } = order(1);
    expectApiError(await charge(user.token, rest), 400, 'invalid_request');
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['non-ASCII', 'ключ-1'],
    ['a control character', 'key\n1'],
    ['a tab', 'key\t1'],
    ['a number', 12345],
    ['null', null],
  ])('refuses idempotency_key %s', async (_, key) => {
    const user = await holder(20);
    const res = await charge(user.token, { ...order(1), idempotency_key: key });
    expectApiError(res, 400, 'invalid_request');
    expect(res.json().error_description).toMatch(/idempotency_key/);
  });

  it('accepts a key of 255 printable characters, spaces and punctuation included', async () => {
    const user = await holder(20);
    const key = ` !"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~`.padEnd(255, 'z');
    const res = await charge(user.token, order(1, key));
    expect(res.statusCode).toBe(201);
    expect(res.json().transaction.idempotency_key).toBe(key);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'd'.repeat(256)],
    ['a NUL character', 'bad\u0000text'],
    ['a number', 5],
  ])('refuses description %s', async (_, description) => {
    const user = await holder(20);
    const res = await charge(user.token, order(1, newKey(), { description }));
    expectApiError(res, 400, 'invalid_request');
    expect(res.json().error_description).toMatch(/description/);
  });

  it('counts description length in characters: 255 emoji are allowed', async () => {
    const user = await holder(20);
    const res = await charge(user.token, order(1, newKey(), { description: '🪙'.repeat(255) }));
    expect(res.statusCode).toBe(201);
  });

  it.each([
    ['not JSON', '{"amount":'],
    ['a JSON array', '[]'],
    ['a JSON string', '"charge"'],
  ])('refuses a body that is %s', async (_, payload) => {
    const user = await holder(20);
    expectApiError(await chargeRaw(user.token, payload), 400, 'invalid_request');
  });

  it('refuses more than the balance with 402, and does not store the key: a retry after a top-up succeeds', async () => {
    const user = await holder(3);
    const key = newKey();
    const refused = await charge(user.token, order(5, key));
    expectApiError(refused, 402, 'insufficient_funds');
    expect(await storedKeys(user.id)).toBe(0);
    expect(await balanceOf(user.token)).toBe(3);
    await credit(t.database.db, t.clock, user.username, { amount: 2 });
    const retried = await charge(user.token, order(5, key));
    expect(retried.statusCode).toBe(201);
    expect(retried.json()).toMatchObject({ balance: 0 });
  });

  it('refuses a charge to a user who never had a wallet with 402', async () => {
    const user = await holder(0);
    expectApiError(await charge(user.token, order(1)), 402, 'insufficient_funds');
  });
});

describe('idempotency', () => {
  it('replays the same key and body with 200 and the same transaction, charging once', async () => {
    const user = await holder(10);
    const first = await charge(user.token, order(4, 'replay-me'));
    expect(first.statusCode).toBe(201);
    await charge(user.token, order(1));
    const again = await charge(user.token, order(4, 'replay-me'));
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // The stored answer, balance included, as it was right after the first charge.
    expect(again.json()).toEqual(first.json());
    expect(await balanceOf(user.token)).toBe(5);
    expect(await ledgerCount(user.id)).toBe(3);
  });

  it('treats 1.5 and 1.50 as the same amount, and ignores unknown fields', async () => {
    const user = await holder(10);
    const key = newKey();
    const first = await chargeRaw(
      user.token,
      `{"amount":1.5,"currency":"COIN","description":"d","idempotency_key":"${key}"}`,
    );
    const again = await chargeRaw(
      user.token,
      `{"amount":1.50,"currency":"COIN","description":"d","idempotency_key":"${key}","note":"retry"}`,
    );
    expect([first.statusCode, again.statusCode]).toEqual([201, 200]);
    expect(await balanceOf(user.token)).toBe(8.5);
  });

  it.each([
    ['amount', { amount: 5 }],
    ['description', { description: 'Shield of testing' }],
  ])('answers 409 idempotency_conflict for the same key with another %s', async (_, change) => {
    const user = await holder(10);
    const key = newKey();
    expect((await charge(user.token, order(4, key))).statusCode).toBe(201);
    expectApiError(await charge(user.token, { ...order(4, key), ...change }), 409, 'idempotency_conflict');
    expect(await balanceOf(user.token)).toBe(6);
  });

  it('scopes keys per client: another client using the same key makes its own charge', async () => {
    const user = await holder(10);
    const arcadeToken = await tokenFor(user.id, arcade);
    expect((await charge(user.token, order(2, 'shared-key'))).statusCode).toBe(201);
    const other = await charge(arcadeToken, order(3, 'shared-key'));
    expect(other.statusCode).toBe(201);
    expect(other.json()).toMatchObject({ transaction: { amount: 3 }, balance: 5 });
  });

  it('scopes keys per user: the same client and key for another user is another charge', async () => {
    const alice = await holder(10);
    const bob = await holder(10);
    expect((await charge(alice.token, order(2, 'per-user'))).statusCode).toBe(201);
    expect((await charge(bob.token, order(2, 'per-user'))).statusCode).toBe(201);
    expect([await balanceOf(alice.token), await balanceOf(bob.token)]).toEqual([8, 8]);
  });

  it('keeps a key for 24 hours; after that the key starts a new charge', async () => {
    const user = await holder(10);
    const start = t.clock.now();
    try {
      expect((await charge(user.token, order(1, 'daily'))).statusCode).toBe(201);
      t.clock.advance(24 * 3600 * 1000 - 1000);
      expect((await charge(user.token, order(1, 'daily'))).statusCode).toBe(200);
      t.clock.advance(2000);
      expect((await charge(user.token, order(2, 'daily'))).statusCode).toBe(201);
      expect(await balanceOf(user.token)).toBe(7);
    } finally {
      t.clock.set(start);
    }
  });
});

describe('concurrency', () => {
  it('40 concurrent charges of 1 against a balance of 10: exactly 10 succeed, the balance ends at 0', async () => {
    const user = await holder(10);
    const results = await Promise.all(Array.from({ length: 40 }, () => charge(user.token, order(1))));
    const statuses = results.map((res) => res.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 402)).toHaveLength(30);
    expect(await balanceOf(user.token)).toBe(0);
    expect(await ledgerCount(user.id)).toBe(11);
    const balancesAfter = results
      .filter((res) => res.statusCode === 201)
      .map((res) => res.json().transaction.balance_after)
      .sort((a: number, b: number) => a - b);
    expect(balancesAfter).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('20 concurrent requests with one key: one debit, every answer the same transaction', async () => {
    const user = await holder(10);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => charge(user.token, order(3, 'double-click'))),
    );
    const statuses = results.map((res) => res.statusCode).sort();
    expect(statuses).toEqual([200, ...Array(18).fill(200), 201].sort());
    const ids = new Set(results.map((res) => res.json().transaction.id));
    expect(ids.size).toBe(1);
    expect(await balanceOf(user.token)).toBe(7);
    expect(await ledgerCount(user.id)).toBe(2);
  });

  it('concurrent charges of one user by two clients never overdraw', async () => {
    const user = await holder(10);
    const arcadeToken = await tokenFor(user.id, arcade);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => charge(i % 2 ? arcadeToken : user.token, order(1))),
    );
    expect(results.filter((res) => res.statusCode === 201)).toHaveLength(10);
    expect(await balanceOf(user.token)).toBe(0);
  });
});

describe('GET /api/v1/wallet/transactions', () => {
  async function page(token: string, query = ''): Promise<LightMyRequestResponse> {
    return t.app.inject({
      method: 'GET',
      url: `/api/v1/wallet/transactions${query}`,
      headers: { authorization: `Bearer ${token}` },
    });
  }

  it("lists this client's charges of the token user, newest first, a page at a time", async () => {
    const user = await holder(100);
    const arcadeToken = await tokenFor(user.id, arcade);
    const other = await holder(100);
    for (let i = 1; i <= 5; i++) {
      t.clock.advance(1000);
      await charge(user.token, order(i, `history-${i}`, { description: `item ${i}` }));
    }
    await charge(arcadeToken, order(9));
    await charge(other.token, order(9));

    const first = await page(user.token, '?limit=2');
    expect(first.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    const body = first.json() as { transactions: Array<Record<string, unknown>>; next_cursor: string };
    expect(body.transactions.map((tx) => tx.description)).toEqual(['item 5', 'item 4']);
    expect(body.transactions[0]).toEqual({
      id: expect.stringMatching(/^tx_/),
      type: 'charge',
      amount: 5,
      currency: 'COIN',
      description: 'item 5',
      status: 'completed',
      balance_after: 85,
      idempotency_key: 'history-5',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(body.next_cursor).toEqual(expect.any(String));

    const second = (await page(user.token, `?limit=2&cursor=${body.next_cursor}`)).json();
    expect(second.transactions.map((tx: { description: string }) => tx.description)).toEqual([
      'item 3',
      'item 2',
    ]);
    const third = (await page(user.token, `?limit=2&cursor=${second.next_cursor}`)).json();
    expect(third.transactions.map((tx: { description: string }) => tx.description)).toEqual(['item 1']);
    expect(third.next_cursor).toBeNull();

    // The other client sees only its own charge; the operator's credit is in neither list.
    const arcadeView = (await page(arcadeToken)).json();
    expect(arcadeView.transactions).toHaveLength(1);
    expect(arcadeView.transactions[0]).toMatchObject({ amount: 9, balance_after: 76 });
    expect(arcadeView.next_cursor).toBeNull();
  });

  it('is empty for a user the client never charged', async () => {
    const user = await holder(5);
    expect((await page(user.token)).json()).toEqual({ ok: true, transactions: [], next_cursor: null });
  });

  it('defaults to 20 and caps larger limits at 100', async () => {
    const user = await holder(200);
    for (let i = 0; i < 101; i++) expect((await charge(user.token, order(1))).statusCode).toBe(201);
    const byDefault = (await page(user.token)).json();
    expect(byDefault.transactions).toHaveLength(20);
    const capped = (await page(user.token, '?limit=1000')).json();
    expect(capped.transactions).toHaveLength(100);
    expect(capped.next_cursor).toEqual(expect.any(String));
  });

  it.each([
    ['limit=0', '?limit=0'],
    ['limit=-1', '?limit=-1'],
    ['limit=abc', '?limit=abc'],
    ['limit=1.5', '?limit=1.5'],
    ['a forged cursor', `?cursor=${Buffer.from('t:1 or 1=1').toString('base64url')}`],
    ['a garbage cursor', '?cursor=%25%00'],
    ['a long cursor', `?cursor=${'a'.repeat(100)}`],
  ])('refuses %s with 400 invalid_request', async (_, query) => {
    const user = await holder(5);
    expectApiError(await page(user.token, query), 400, 'invalid_request');
  });
});

describe('the books', () => {
  it('refuses to update or delete a ledger entry', async () => {
    const user = await holder(5);
    await expect(
      sql`update wallet_transactions set amount = 1 where user_id = ${user.id}`.execute(t.database.db),
    ).rejects.toThrow(/append-only/);
    await expect(
      sql`delete from wallet_transactions where user_id = ${user.id}`.execute(t.database.db),
    ).rejects.toThrow(/append-only/);
  });

  it('refuses a negative balance at the database, whatever the code does', async () => {
    const user = await holder(5);
    await expect(
      sql`update wallets set balance = -1 where user_id = ${user.id}`.execute(t.database.db),
    ).rejects.toThrow(/wallets_balance_in_range/);
  });

  it('finds a balance that does not match its ledger', async () => {
    const user = await holder(5);
    await sql`update wallets set balance = balance + 1 where user_id = ${user.id}`.execute(t.database.db);
    try {
      const check = await verifyLedger(t.database.db);
      expect(check.ok).toBe(false);
      expect(check.mismatches).toEqual([
        { user_id: user.id, balance: 5.01, ledger_sum: 5, last_balance_after: 5 },
      ]);
    } finally {
      await sql`update wallets set balance = balance - 1 where user_id = ${user.id}`.execute(t.database.db);
    }
  });

  it('refuses a credit that would take a balance past 2^53 − 1 minor units', async () => {
    const user = await holder(0);
    const nearTop = Number.MAX_SAFE_INTEGER - 50;
    // A wallet near the top, with the ledger entry that explains it (so the books still balance).
    await sql`insert into wallets (user_id, balance, updated_at) values (${user.id}, ${nearTop}, now())`.execute(
      t.database.db,
    );
    await sql`
      insert into wallet_transactions (public_id, user_id, type, amount, balance_after, description, created_at)
      values ('tx_near_top', ${user.id}, 'credit', ${nearTop}, ${nearTop}, 'seed', now())`.execute(
      t.database.db,
    );
    await expect(credit(t.database.db, t.clock, user.username, { amount: 1 })).rejects.toMatchObject({
      error: 'invalid_request',
    });
    await expect(
      credit(t.database.db, t.clock, user.username, { amount: 1_000_000_001 }),
    ).rejects.toMatchObject({ error: 'invalid_request' });
    expect(await ledgerCount(user.id)).toBe(1);
  });
});

describe('a database failure in the middle of a charge', () => {
  it('writes nothing, answers 503, and a retry with the same key charges once', async () => {
    const user = await holder(10);
    const db = t.database.db;
    // The ledger insert fails as a dropped connection would, after the key was claimed and the
    // wallet debited in the same transaction.
    await sql`
      create function fail_ledger_insert() returns trigger language plpgsql as $$
      begin
        raise exception 'connection lost' using errcode = '08006';
      end
      $$`.execute(db);
    await sql`
      create trigger fail_ledger_insert before insert on wallet_transactions
      for each row execute function fail_ledger_insert()`.execute(db);
    try {
      expectApiError(await charge(user.token, order(4, 'flaky')), 503, 'unavailable');
    } finally {
      await sql`drop trigger fail_ledger_insert on wallet_transactions`.execute(db);
      await sql`drop function fail_ledger_insert()`.execute(db);
    }
    expect(await balanceOf(user.token)).toBe(10);
    expect(await storedKeys(user.id)).toBe(0);
    expect(await ledgerCount(user.id)).toBe(1);

    const retried = await charge(user.token, order(4, 'flaky'));
    expect(retried.statusCode).toBe(201);
    expect((await charge(user.token, order(4, 'flaky'))).statusCode).toBe(200);
    expect(await balanceOf(user.token)).toBe(6);
    expect(await ledgerCount(user.id)).toBe(2);
  });
});
