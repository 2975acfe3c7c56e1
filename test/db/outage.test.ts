import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type DatabaseHandle, openPostgres } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { testConfig } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import { createMigratedPostgresDatabase, migratedTemplate, usingPostgres } from '../helpers/database.js';
import { freePort, TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * The server talks to its database through a proxy that the test cuts and restores: requests get
 * 503 while it is gone, liveness stays up, and the service recovers by itself, without a restart.
 * On PGlite runs the database behind the proxy is PGlite served over the PostgreSQL protocol.
 */
let app: FastifyInstance;
let database: DatabaseHandle;
let proxy: TcpProxy;
const teardown: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  let upstream: URL;
  if (usingPostgres) {
    const migrated = await createMigratedPostgresDatabase();
    teardown.push(migrated.drop);
    upstream = new URL(migrated.url);
  } else {
    // The migrated template of test/global-setup.ts: no initdb, nothing to migrate.
    const pglite = await PGlite.create({ extensions: { pg_trgm }, loadDataDir: await migratedTemplate() });
    const port = await freePort();
    const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port });
    await server.start();
    teardown.push(
      () => pglite.close(),
      () => server.stop(),
    );
    upstream = new URL(`postgres://postgres@127.0.0.1:${port}/postgres`);
  }
  proxy = new TcpProxy(upstream.hostname, Number(upstream.port || 5432));
  const proxyPort = await proxy.start();
  teardown.push(() => proxy.cut());
  const viaProxy = new URL(upstream);
  viaProxy.host = `127.0.0.1:${proxyPort}`;
  database = openPostgres({ url: viaProxy.toString(), poolMax: usingPostgres ? 4 : 1 });
  teardown.push(() => database.close());
  await migrateToLatest(database.db);
  app = await buildApp({ config: testConfig(), db: database.db });
  teardown.push(() => app.close());
});

afterAll(async () => {
  for (const step of teardown.reverse()) await step().catch(() => undefined);
});

describe('a database outage', () => {
  it('is answered with 503 while it lasts, and the service recovers by itself', async () => {
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);

    await proxy.cut();
    expectApiError(await app.inject({ method: 'GET', url: '/health/ready' }), 503, 'unavailable');
    expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
    const status = await app.inject({ method: 'GET', url: '/api/v1/platform/status' });
    expect(status.statusCode).toBe(200);
    expect(status.json()).toMatchObject({
      status: 'degraded',
      services: [
        { name: 'api', status: 'degraded' },
        { name: 'database', status: 'outage' },
      ],
    });

    // A page that needs the database answers with a 503 page, an API with the 503 JSON body.
    const page = await app.inject({
      method: 'GET',
      url: '/api/v1/oauth/authorize?response_type=code&client_id=pk_any&redirect_uri=https%3A%2F%2Fsite.example%2Fcb',
    });
    expect(page.statusCode).toBe(503);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expectApiError(
      await app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: 'Bearer at_any' } }),
      503,
      'unavailable',
    );

    await proxy.start();
    await expect
      .poll(async () => (await app.inject({ method: 'GET', url: '/health/ready' })).statusCode, {
        timeout: 10_000,
      })
      .toBe(200);
    const recovered = await app.inject({ method: 'GET', url: '/api/v1/platform/status' });
    expect(recovered.json()).toMatchObject({
      status: 'operational',
      services: [{}, { status: 'operational' }],
    });
  });
});
