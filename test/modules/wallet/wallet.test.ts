import { describe, expect, it } from 'vitest';
import { credit } from '../../../src/modules/wallet/wallet.service.js';
import { expectApiError } from '../../helpers/assertions.js';
import {
  balanceOf,
  charge,
  chargeRaw,
  holder,
  newKey,
  order,
  setUpWalletApp,
  storedKeys,
  t,
} from './wallet.fixture.js';

/*
 * POST /api/v1/wallet/charge: validation, debits and refusals.
 * After every test, every balance equals the sum of its ledger entries.
 */

setUpWalletApp();

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
    await credit(t.database.db, { config: t.config, clock: t.clock }, { username: user.username, amount: 2 });
    const retried = await charge(user.token, order(5, key));
    expect(retried.statusCode).toBe(201);
    expect(retried.json()).toMatchObject({ balance: 0 });
  });

  it('refuses a charge to a user who never had a wallet with 402', async () => {
    const user = await holder(0);
    expectApiError(await charge(user.token, order(1)), 402, 'insufficient_funds');
  });
});
