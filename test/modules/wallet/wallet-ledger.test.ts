import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { credit, verifyLedger } from '../../../src/modules/wallet/wallet.service.js';
import { expectApiError } from '../../helpers/assertions.js';
import { usingPostgres } from '../../helpers/database.js';
import {
  arcade,
  charge,
  holder,
  ledgerCount,
  order,
  setUpWalletApp,
  shop,
  t,
  tokenFor,
} from './wallet.fixture.js';

/*
 * The history a client sees (GET /api/v1/wallet/transactions) and the books: the ledger is
 * append-only and every balance equals the sum of its entries.
 */

setUpWalletApp();

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
    await expect(
      credit(t.database.db, { config: t.config, clock: t.clock }, { username: user.username, amount: 1 }),
    ).rejects.toMatchObject({
      error: 'invalid_request',
    });
    await expect(
      credit(
        t.database.db,
        { config: t.config, clock: t.clock },
        { username: user.username, amount: 1_000_000_001 },
      ),
    ).rejects.toMatchObject({ error: 'invalid_request' });
    expect(await ledgerCount(user.id)).toBe(1);
  });

  // Only PostgreSQL has other sessions: PGlite runs one statement at a time.
  it.skipIf(!usingPostgres)(
    "takes no lock on the user's or the site's row: a charge goes through while both are locked",
    async () => {
      const user = await holder(5);
      await t.database.db.transaction().execute(async (trx) => {
        await sql`select 1 from users where id = ${user.id} for update`.execute(trx);
        await sql`select 1 from clients where client_id = ${shop.clientId} for update`.execute(trx);
        // A foreign key's check would wait for this transaction (FOR KEY SHARE against FOR UPDATE).
        const res = await Promise.race([
          charge(user.token, order(1)),
          new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 3000)),
        ]);
        expect(res === 'waited' ? res : res.statusCode).toBe(201);
      });
    },
  );
});
