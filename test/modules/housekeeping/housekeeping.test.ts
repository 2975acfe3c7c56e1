import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/schema.js';
import { purgeExpired, schedulePurge } from '../../../src/modules/housekeeping/purge.service.js';
import { insertPushedRequest } from '../../../src/modules/oauth/pushed-requests.repository.js';
import { chargeWallet } from '../../../src/modules/wallet/wallet.repository.js';
import { credit } from '../../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { makeClient, makeUser } from '../../helpers/factories.js';
import { insertAccessToken } from '../../helpers/tokens.js';

/*
 * Housekeeping: expired codes, authorization requests, tokens, sessions, mobile challenges,
 * idempotency keys, pushed authorization requests and old sign-in counts are deleted in small batches; live rows stay; several
 * instances purging at once share the work.
 */

const HOUR = 3600_000;
let t: TestApp;
let userId: number;
let username: string;
let clientPk: number;
let clientId: string;

beforeAll(async () => {
  // The sign-in window the purge cuts sign-in counts at.
  t = await createTestApp({ env: { SIGN_IN_WINDOW_SECONDS: String(HOUR / 1000) } });
  const user = await makeUser(t);
  userId = user.id;
  username = user.username;
  const client = await makeClient(t);
  clientId = client.clientId;
  const row = await t.database.db
    .selectFrom('clients')
    .select('id')
    .where('client_id', '=', clientId)
    .executeTakeFirstOrThrow();
  clientPk = row.id;
  await credit(t.database.db, { config: t.config, clock: t.clock }, { username, amount: 1000 });
});
afterAll(() => t.close());
const ctx = () => ({ config: t.config, clock: t.clock });

const id = () => randomBytes(16).toString('base64url');

/** One row of each kind ending at `expiresAt`. */
async function seed(expiresAt: Date): Promise<void> {
  const db = t.database.db;
  const now = t.clock.now();
  await insertAccessToken(db, { userId, clientId, scopes: ['openid'], expiresAt, clock: t.clock });
  const grant = await db
    .selectFrom('grants')
    .select('id')
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('refresh_tokens')
    .values({ token_hash: id(), grant_id: grant.id, created_at: now, expires_at: expiresAt })
    .execute();
  await db
    .insertInto('authorization_codes')
    .values({
      code_hash: id(),
      client_pk: clientPk,
      user_id: userId,
      redirect_uri: 'https://site.example/callback',
      scopes: ['openid'],
      code_challenge: null,
      nonce: null,
      auth_time: now,
      created_at: now,
      expires_at: expiresAt,
    })
    .execute();
  await db
    .insertInto('authorization_requests')
    .values({
      id_hash: id(),
      client_pk: clientPk,
      redirect_uri: 'https://site.example/callback',
      scopes: ['openid'],
      state: 's',
      nonce: null,
      code_challenge: null,
      prompt: null,
      stale_session_hash: null,
      created_at: now,
      expires_at: expiresAt,
    })
    .execute();
  await db
    .insertInto('browser_sessions')
    .values({
      id_hash: id(),
      user_id: userId,
      auth_time: now,
      created_at: now,
      expires_at: expiresAt,
      user_agent: null,
      ip: null,
    })
    .execute();
  await db
    .insertInto('mobile_challenges')
    .values({
      challenge_hash: id(),
      client_pk: clientPk,
      device_id: 'device-0001',
      created_at: now,
      expires_at: expiresAt,
    })
    .execute();
  await insertPushedRequest(db, {
    requestUriHash: id(),
    clientPk,
    parameters: { state: 's' },
    at: now,
    expiresAt,
  });
  const charged = await chargeWallet(db, {
    clientPk,
    userId,
    key: id(),
    requestHash: 'h',
    publicId: `tx_${id()}`,
    amount: 1,
    description: 'seed',
    now,
    keyExpiresAt: expiresAt,
    actor: `client:${clientId}`,
    ip: null,
  });
  expect(charged.outcome).toBe('charged');
}

const TABLES = [
  'access_tokens',
  'refresh_tokens',
  'authorization_codes',
  'authorization_requests',
  'browser_sessions',
  'mobile_challenges',
  'wallet_idempotency_keys',
  'pushed_authorization_requests',
] as const satisfies ReadonlyArray<keyof Database>;

async function counts(): Promise<Record<string, number>> {
  const result: Record<string, number> = {};
  for (const table of [...TABLES, 'sign_in_attempts', 'wallet_transactions'] as const) {
    const row = await t.database.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    result[table] = Number(row.n);
  }
  return result;
}

describe('purgeExpired', () => {
  it('deletes expired rows of every kind in batches, keeps live ones and the ledger', async () => {
    const now = t.clock.now();
    for (let i = 0; i < 5; i++) await seed(new Date(now.getTime() - HOUR));
    for (let i = 0; i < 2; i++) await seed(new Date(now.getTime() + HOUR));
    await t.database.db
      .insertInto('sign_in_attempts')
      .values({ user_id: userId, attempts: 3, window_started_at: new Date(now.getTime() - 2 * HOUR) })
      .execute();
    const before = await counts();

    const report = await purgeExpired(t.database.db, ctx(), { batchSize: 2, pauseMs: 0 });
    for (const table of TABLES) expect(report[table], table).toBe(5);
    expect(report.sign_in_attempts).toBe(1);

    const after = await counts();
    for (const table of TABLES) expect(after[table], table).toBe((before[table] ?? 0) - 5);
    expect(after.sign_in_attempts).toBe(0);
    // Ledger entries are never purged, whatever their keys.
    expect(after.wallet_transactions).toBe(before.wallet_transactions);
    // A second run finds nothing.
    const again = await purgeExpired(t.database.db, ctx(), { batchSize: 2, pauseMs: 0 });
    expect(Object.values(again).every((deleted) => deleted === 0)).toBe(true);
  });

  it('keeps a current sign-in count', async () => {
    const now = t.clock.now();
    await t.database.db
      .insertInto('sign_in_attempts')
      .values({ user_id: userId, attempts: 1, window_started_at: now })
      .onConflict((conflict) =>
        conflict.columns(['user_id', 'source']).doUpdateSet({ attempts: 1, window_started_at: now }),
      )
      .execute();
    await purgeExpired(t.database.db, ctx(), { batchSize: 10, pauseMs: 0 });
    expect((await counts()).sign_in_attempts).toBe(1);
  });

  it('can run on several instances at once: together they delete each row once', async () => {
    const now = t.clock.now();
    for (let i = 0; i < 6; i++) await seed(new Date(now.getTime() - HOUR));
    const reports = await Promise.all(
      [0, 1, 2].map(() => purgeExpired(t.database.db, ctx(), { batchSize: 1, pauseMs: 0 })),
    );
    for (const table of TABLES) {
      expect(
        reports.reduce((sum, report) => sum + (report[table] ?? 0), 0),
        table,
      ).toBe(6);
    }
  });
});

describe('schedulePurge', () => {
  it('purges on its interval until stopped', async () => {
    const now = t.clock.now();
    await seed(new Date(now.getTime() - HOUR));
    const logged: object[] = [];
    const stop = schedulePurge(t.database.db, ctx(), {
      intervalMs: 20,
      log: { info: (object) => logged.push(object), warn: (object) => logged.push(object) },
    });
    try {
      await expect.poll(() => logged.length, { timeout: 5000 }).toBeGreaterThan(0);
      expect(logged).toContainEqual({ purged: expect.objectContaining({ mobile_challenges: 1 }) });
    } finally {
      await stop();
    }
  });
});
