import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, testConfig } from '../helpers/app.js';

/*
 * HTTP_REQUEST_TIMEOUT_MS over a real listening socket: a request whose headers or body trickle in
 * (a byte every quarter second, never idle) is answered 408 in the contract's shape and its
 * connection closed once the timeout has passed, so a few hundred such connections cannot hold a
 * server reached without a proxy. A short timeout keeps the test to seconds.
 */

const TIMEOUT_MS = 1_500;
/** The timeout is checked every second at most (src/app.ts), and the machine may be busy. */
const SLACK_MS = 2_500;
const TRICKLE_MS = 250;

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await createTestApp({ env: { HTTP_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(() => t.close());

interface Trickle {
  /** Everything the server wrote. */
  received: string;
  /** Milliseconds from the first byte sent to the server closing the connection. */
  closedAfterMs: number;
}

/**
 * Sends `head` at once, then `tail` one byte every TRICKLE_MS, and resolves when the server
 * closes the connection; after `giveUpMs` it stops waiting and rejects (the server kept it open).
 */
function trickle(head: string, tail: string, giveUpMs: number): Promise<Trickle> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let received = '';
    let sent = 0;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    const drip = setInterval(() => {
      if (sent < tail.length && socket.writable) socket.write(tail[sent++] as string);
    }, TRICKLE_MS);
    const giveUp = setTimeout(() => {
      clearInterval(drip);
      socket.destroy();
      reject(new Error(`still open after ${giveUpMs} ms, ${sent} bytes trickled`));
    }, giveUpMs);
    socket.on('data', (chunk) => {
      received += chunk;
    });
    socket.on('error', () => undefined); // a reset while writing: the close below settles it
    socket.on('close', () => {
      clearInterval(drip);
      clearTimeout(giveUp);
      resolve({ received, closedAfterMs: Date.now() - started });
    });
  });
}

function expectTimeoutAnswer(result: Trickle): void {
  expect(result.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
  const [head = '', body = ''] = result.received.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 408 /);
  expect(JSON.parse(body)).toEqual({
    ok: false,
    error: 'invalid_request',
    error_description: expect.any(String),
  });
}

describe('HTTP_REQUEST_TIMEOUT_MS', () => {
  it('closes a connection whose body arrives a byte at a time', async () => {
    const form = `username=${'u'.repeat(40)}&password=${'p'.repeat(40)}`;
    const head =
      'POST /signin HTTP/1.1\r\nHost: localhost\r\n' +
      `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n`;
    expectTimeoutAnswer(await trickle(head, form, TIMEOUT_MS + SLACK_MS));
  });

  it('closes a connection whose headers arrive a byte at a time', async () => {
    const headers = `X-Slow: ${'h'.repeat(60)}\r\n\r\n`;
    expectTimeoutAnswer(
      await trickle('GET /api/v1/ HTTP/1.1\r\nHost: localhost\r\n', headers, TIMEOUT_MS + SLACK_MS),
    );
  });

  it('answers a request that arrives in time', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/platform/status`);
    expect(res.status).toBe(200);
  });

  it('is a setting from 1 s to 10 min, 30 s unless set, for headers and body alike', () => {
    expect(t.app.server.requestTimeout).toBe(TIMEOUT_MS);
    expect(t.app.server.headersTimeout).toBe(TIMEOUT_MS);
    expect(testConfig().HTTP_REQUEST_TIMEOUT_MS).toBe(30_000);
    expect(() => testConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' })).toThrow(/HTTP_REQUEST_TIMEOUT_MS/);
    expect(() => testConfig({ HTTP_REQUEST_TIMEOUT_MS: '600001' })).toThrow(/HTTP_REQUEST_TIMEOUT_MS/);
  });
});
