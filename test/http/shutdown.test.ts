import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { closeQuietConnectionsOnDrain } from '../../src/http/drain.js';
import { testConfig } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { keepAliveLoad } from '../helpers/keep-alive-load.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

/** Sends raw HTTP/1.1 on one connection and collects everything the server answers until it closes. */
function rawExchange(port: number, onConnected: (socket: net.Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = net.createConnection(port, '127.0.0.1', () => onConnected(socket));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

/** A listening app with a `/test/slow` route that waits until `release()`; `arrived` resolves when it is entered. */
async function appWithSlowRoute() {
  const app: FastifyInstance = await buildApp({ config: testConfig(), db: database.db });
  let release: () => void = () => undefined;
  let entered: () => void = () => undefined;
  const arrived = new Promise<void>((resolve) => {
    entered = resolve;
  });
  app.get('/test/slow', { config: { auth: 'public', description: 'slow test route' } }, async () => {
    entered();
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    return { ok: true, finished: true };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as net.AddressInfo;
  return { app, port, arrived, release: () => release() };
}

describe('graceful shutdown', () => {
  it('stops accepting connections and finishes in-flight requests', async () => {
    const { app, port, arrived: slowArrived, release } = await appWithSlowRoute();

    const exchange = rawExchange(port, (socket) => {
      socket.write('GET /test/slow HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    await slowArrived;
    const closing = app.close();
    const idle = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      const probe = net.createConnection(port, '127.0.0.1');
      probe.on('connect', () => {
        probe.destroy();
        resolve(undefined);
      });
      probe.on('error', resolve);
    });
    expect(['ECONNREFUSED', 'ECONNRESET']).toContain(idle?.code); // no new connection is served once closing
    release();
    await closing;
    const answer = await exchange;
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toContain('"finished":true');
  });

  it('serves a request that completes during the drain, and closes its connection', async () => {
    const app: FastifyInstance = await buildApp({ config: testConfig(), db: database.db });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as net.AddressInfo;
    let connection: net.Socket | undefined;
    let connected: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      connected = resolve;
    });
    // The request line and headers arrive before the shutdown, the blank line that ends them after.
    const exchange = rawExchange(port, (socket) => {
      connection = socket;
      socket.write('GET /api/v1/platform/status HTTP/1.1\r\nHost: x\r\n', () => connected());
    });
    await ready;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const closing = app.close();
    connection?.write('\r\n');
    await closing;
    const answer = await exchange;
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toMatch(/connection: close/i);
    expect(answer).not.toContain('"error"');
  });

  it('closes kept-alive connections after their in-flight response', async () => {
    const { app, port, arrived: slowArrived, release } = await appWithSlowRoute();
    const exchange = rawExchange(port, (socket) => {
      socket.write('GET /test/slow HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    });
    await slowArrived;
    const closing = app.close();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the server has stopped listening
    release();
    await closing; // would wait for the keep-alive timeout if the connection stayed open
    const answer = await exchange;
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*connection: close/i);
  });
});

/** A listening app that drains as the server process does (src/main.ts). */
async function drainingApp() {
  const app: FastifyInstance = await buildApp({ config: testConfig(), db: database.db });
  closeQuietConnectionsOnDrain(app.server);
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: (app.server.address() as net.AddressInfo).port };
}

describe('draining kept-alive connections', () => {
  it('answers a request sent on an idle kept-alive connection as the drain starts, and closes it', async () => {
    const { app, port } = await drainingApp();
    let closing: Promise<undefined> | undefined;
    const exchange = rawExchange(port, (socket) => {
      socket.write('GET /api/v1/platform/status HTTP/1.1\r\nHost: x\r\n\r\n');
      socket.once('data', () => {
        // The first answer is in: the connection is idle when the close begins, and the next
        // request is already on its way (Node's close destroyed such a connection at once).
        closing = app.close();
        socket.write('POST /api/v1/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n'); // answered as ever
      });
    });
    const answer = await exchange;
    await closing;
    const [first, second] = answer.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(first).toMatch(/connection: keep-alive/i);
    // The token endpoint's own answer to a request without a grant (not a 503 of the drain).
    expect(second).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(second).toMatch(/connection: close/i);
    expect(second).toContain('"error":"invalid_request"');
  });

  it('says it is not ready during the drain (the other routes are served: above)', async () => {
    const { app, port } = await drainingApp();
    let closing: Promise<undefined> | undefined;
    const answer = await rawExchange(port, (socket) => {
      socket.write('GET /health/ready HTTP/1.1\r\nHost: x\r\n\r\n');
      socket.once('data', () => {
        closing = app.close();
        socket.write('GET /health/ready HTTP/1.1\r\nHost: x\r\n\r\n');
      });
    });
    await closing;
    const [before, during] = answer.split(/(?=HTTP\/1\.1 )/);
    expect(before).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(during).toMatch(/^HTTP\/1\.1 503 Service Unavailable/);
    expect(during).toMatch(/connection: close/i);
    expect(during).toContain('"error":"unavailable"');
  });

  it('closes a kept-alive connection that stays quiet, and then finishes closing', async () => {
    const { app, port } = await drainingApp();
    let closing: Promise<undefined> | undefined;
    const answer = await rawExchange(port, (socket) => {
      socket.write('GET /api/v1/platform/status HTTP/1.1\r\nHost: x\r\n\r\n');
      socket.once('data', () => {
        closing = app.close();
      });
    });
    await closing; // resolves only once the last connection is closed
    expect(answer.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  it('answers every request of a kept-alive pool sending without pause, and closes each connection with its answer', async () => {
    const { app, port } = await drainingApp();
    const load = keepAliveLoad(`http://127.0.0.1:${port}`);
    await load.answered(40);
    await app.close();
    const outcomes = await load.finished();
    expect(outcomes.filter((outcome) => outcome.error)).toEqual([]); // no reset, no hang-up
    const last = new Map(outcomes.map((outcome) => [outcome.connection, outcome]));
    expect(last.size).toBeGreaterThanOrEqual(4);
    for (const outcome of last.values()) expect(outcome.connectionHeader).toBe('close');
    // Served as ever (the status, the token endpoint's 401 for a POST without a client), none refused.
    expect(outcomes.filter((outcome) => outcome.status === 503)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.status === 200).length).toBeGreaterThan(0);
  });
});
