import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type DatabaseHandle, openPostgres } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { systemClock } from '../../src/lib/clock.js';
import { createUser } from '../../src/modules/accounts/accounts.service.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { credit } from '../../src/modules/wallet/wallet.service.js';
import { testConfig } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import { createEmptyPostgresDatabase, usingPostgres } from '../helpers/database.js';
import { insertAccessToken } from '../helpers/tokens.js';

/*
 * A request never hangs on the database: DATABASE_STATEMENT_TIMEOUT_MS bounds every statement.
 * A charge that waits on a wallet another connection has locked is cut off with 503, writes
 * nothing, and the same charge succeeds once the lock is gone. PostgreSQL only (the embedded
 * database has one connection, nothing else can hold a lock).
 */

describe.skipIf(!usingPostgres)('the statement timeout', () => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  let url: string;
  beforeAll(async () => {
    const empty = await createEmptyPostgresDatabase();
    drop = empty.drop;
    url = empty.url;
    database = openPostgres({ url, statementTimeoutMs: 300 });
    await migrateToLatest(database.db);
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  it('cuts off a charge stuck behind a lock with 503, and the retry charges once', async () => {
    const config = testConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '300' });
    const app = await buildApp({ config, db: database.db });
    const user = await createUser(
      database.db,
      { config, clock: systemClock },
      {
        username: 'locked_out',
        password: 'a long enough password',
      },
    );
    const shop = await createClient(
      database.db,
      { config, clock: systemClock },
      {
        name: 'Shop',
        siteUrl: 'https://shop.example',
        redirectUris: ['https://shop.example/cb'],
        wallet: true,
      },
    );
    await credit(database.db, { config, clock: systemClock }, { username: 'locked_out', amount: 10 });
    const token = await insertAccessToken(database.db, {
      userId: user.id,
      clientId: shop.client_id,
      scopes: ['openid', 'wallet'],
    });
    const charge = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/wallet/charge',
        headers: { authorization: `Bearer ${token}` },
        payload: { amount: 3, currency: 'COIN', description: 'Sword', idempotency_key: 'stuck' },
      });

    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select * from wallets where user_id = $1 for update', [user.id]);
      const started = performance.now();
      expectApiError(await charge(), 503, 'unavailable');
      expect(performance.now() - started).toBeLessThan(5000);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    const balance = await database.db
      .selectFrom('wallets')
      .select('balance')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(balance.balance).toBe(1000);
    expect((await charge()).statusCode).toBe(201);
    expect((await charge()).statusCode).toBe(200);
    const after = await database.db
      .selectFrom('wallets')
      .select('balance')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(after.balance).toBe(700);
    await app.close();
  });
});
