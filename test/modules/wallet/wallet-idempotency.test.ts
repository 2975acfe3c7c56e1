import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { expectApiError } from '../../helpers/assertions.js';
import {
  arcade,
  balanceOf,
  charge,
  chargeRaw,
  holder,
  ledgerCount,
  newKey,
  order,
  setUpWalletApp,
  storedKeys,
  t,
  tokenFor,
} from './wallet.fixture.js';

/*
 * A charge happens once per idempotency key: replays, conflicts, concurrent charges, and a failure
 * in the middle of a charge.
 */

setUpWalletApp();

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
