import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { credit, verifyLedger } from '../../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { makeClient, makeUser, type TestClient } from '../../helpers/factories.js';
import { insertAccessToken } from '../../helpers/tokens.js';

/** What the wallet test files share: the app, its clients, and requests against the wallet routes. */
export let t: TestApp;
export let shop: TestClient;
export let arcade: TestClient;
export let plain: TestClient;

/** A fresh app with two wallet clients and one without; after every test the books must balance. */
export function setUpWalletApp(): void {
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
}

export interface Holder {
  id: number;
  username: string;
  token: string;
}

/** A user with `balance` coins and a wallet-scoped token of `client` (default the shop). */
export async function holder(balance: number, client: TestClient = shop): Promise<Holder> {
  const user = await makeUser(t);
  if (balance > 0)
    await credit(
      t.database.db,
      { config: t.config, clock: t.clock },
      { username: user.username, amount: balance },
    );
  const token = await tokenFor(user.id, client);
  return { id: user.id, username: user.username, token };
}

export function tokenFor(userId: number, client: TestClient, scopes = ['openid', 'wallet']): Promise<string> {
  return insertAccessToken(t.database.db, { userId, clientId: client.clientId, scopes, clock: t.clock });
}

let keyCount = 0;
export const newKey = () => `order-${++keyCount}`;

export function chargeRaw(token: string, payload: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/charge',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload,
  });
}

export function charge(token: string, body: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return chargeRaw(token, JSON.stringify(body));
}

export const order = (amount: unknown, key = newKey(), extra: Record<string, unknown> = {}) => ({
  amount,
  currency: 'COIN',
  description: 'Sword of testing',
  idempotency_key: key,
  ...extra,
});

export async function balanceOf(token: string): Promise<number> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/v1/wallet/balance',
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.statusCode).toBe(200);
  return (res.json() as { balance: number }).balance;
}

export async function ledgerCount(userId: number): Promise<number> {
  const row = await t.database.db
    .selectFrom('wallet_transactions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function storedKeys(userId: number): Promise<number> {
  const row = await t.database.db
    .selectFrom('wallet_idempotency_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export const ROUTES = [
  { method: 'GET', url: '/api/v1/wallet/balance' },
  { method: 'POST', url: '/api/v1/wallet/charge' },
  { method: 'GET', url: '/api/v1/wallet/transactions' },
] as const;

export function call(route: (typeof ROUTES)[number], token?: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: route.method,
    url: route.url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(route.method === 'POST' ? { payload: order(1) } : {}),
  });
}
