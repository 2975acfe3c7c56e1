import net, { type AddressInfo } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type DatabaseHandle, openPostgres } from '../../src/db/database.js';
import { testConfig } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import { createEmptyPostgresDatabase, migratedTemplate, usingPostgres } from '../helpers/database.js';
import { capturedLogger } from '../helpers/log-capture.js';
import { freePort, TcpProxy } from '../helpers/tcp-proxy.js';

/*
 * A client that hangs up mid-upload makes Node fail the request's stream with ECONNRESET, the code
 * of a database's reset connection too. The log tells them apart: the client's is an info line
 * saying it hung up, never the "service unavailable" of a database outage, which a database's
 * reset (through a proxy that resets the connection mid-query) still is.
 */

let app: FastifyInstance;
let port: number;
let proxy: TcpProxy;
const { logger, lines } = capturedLogger('debug');
const teardown: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  let upstream: URL;
  if (usingPostgres) {
    const empty = await createEmptyPostgresDatabase();
    teardown.push(empty.drop);
    upstream = new URL(empty.url);
  } else {
    // A copy of the suite's migrated database: an empty one's initdb takes seconds.
    const pglite = await PGlite.create({ loadDataDir: await migratedTemplate(), extensions: { pg_trgm } });
    const pglitePort = await freePort();
    const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: pglitePort });
    await server.start();
    teardown.push(
      () => pglite.close(),
      () => server.stop(),
    );
    upstream = new URL(`postgres://postgres@127.0.0.1:${pglitePort}/postgres`);
  }
  proxy = new TcpProxy(upstream.hostname, Number(upstream.port || 5432));
  const viaProxy = new URL(upstream);
  viaProxy.host = `127.0.0.1:${await proxy.start()}`;
  teardown.push(() => proxy.cut());
  const database: DatabaseHandle = openPostgres({ url: viaProxy.toString(), poolMax: usingPostgres ? 4 : 1 });
  teardown.push(() => database.close());
  app = await buildApp({ config: testConfig({ LOG_LEVEL: 'debug' }), db: database.db, logger });
  teardown.push(() => app.close());
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const step of teardown.reverse()) await step().catch(() => undefined);
});

type LogLine = {
  level: number;
  msg: string;
  reason?: string;
  method?: string;
  url?: string;
  err?: { code?: string };
};
const logged = (): LogLine[] => lines.map((line) => JSON.parse(line) as LogLine);
const INFO = 30;

/** Sends a request's head and part of its body, then closes (or resets) the connection. */
function hangUpMidUpload(path: string, contentType: string, close: 'end' | 'reset'): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${contentType}\r\nContent-Length: 100000\r\n\r\n`,
      );
      // The body's first bytes, once the server has them: then the client goes.
      socket.write('grant_type=authorization_code&code=', () => {
        if (close === 'reset') socket.resetAndDestroy();
        else socket.destroy();
      });
    });
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
}

describe('a client that hangs up mid-upload', () => {
  it.each([
    [
      'a form to the token endpoint, connection closed',
      '/api/v1/oauth/token',
      'application/x-www-form-urlencoded',
      'end',
    ],
    ['JSON to the wallet, connection reset (RST)', '/api/v1/wallet/charge', 'application/json', 'reset'],
    ['a form to a page, connection closed', '/signin', 'application/x-www-form-urlencoded', 'end'],
  ] as const)('%s: one info line saying the client hung up, no outage', async (_name, path, type, close) => {
    const before = lines.length;
    await hangUpMidUpload(path, type, close);
    await expect
      .poll(
        () =>
          logged()
            .slice(before)
            .filter((line) => line.msg.includes('hung up')),
        { timeout: 5_000 },
      )
      .toEqual([
        expect.objectContaining({
          level: INFO,
          msg: 'client hung up before its request arrived in full',
          method: 'POST',
          url: path,
          reason: 'aborted (ECONNRESET)',
        }),
      ]);
    // Nothing at warn or above: no "service unavailable", no unhandled error.
    expect(
      logged()
        .slice(before)
        .filter((line) => line.level > INFO),
    ).toEqual([]);
  });
});

describe('a database connection reset mid-query', () => {
  it('is still a database outage: 503 unavailable and a warning with the ECONNRESET', async () => {
    // Readiness asks the database (no table needed): first to open the pool's connection, whose
    // next query is then reset.
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    const before = lines.length;
    proxy.resetOnNextSend();
    const res = await app.inject({ method: 'GET', url: '/health/ready' });
    expectApiError(res, 503, 'unavailable');
    const warnings = logged()
      .slice(before)
      .filter((line) => line.msg === 'service unavailable');
    expect(warnings).toEqual([
      expect.objectContaining({ level: 40, err: expect.objectContaining({ code: 'ECONNRESET' }) }),
    ]);
    expect(
      logged()
        .slice(before)
        .some((line) => line.msg.includes('hung up')),
    ).toBe(false);
    // The pool replaces the broken connection: the next request is answered.
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
  });
});
