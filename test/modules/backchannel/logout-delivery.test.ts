import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type DeliveryOptions,
  deliverLogoutToken,
} from '../../../src/modules/backchannel/logout-delivery.js';

/*
 * The POST of a logout token (Back-Channel Logout 1.0 §2.5) on its own, against servers on
 * 127.0.0.1 in this process: the answer's size is capped, a silent site times out, and an address
 * given as an IP literal is checked like a resolved one, before any connection.
 */

let port = 0;
const server = http.createServer((request, response) => {
  request.resume();
  if (request.url === '/silent') return; // never answers
  const status = /^\/status\/(\d{3})$/.exec(request.url ?? '')?.[1];
  if (status) return void response.writeHead(Number(status)).end();
  response.writeHead(200, { 'content-type': 'text/plain' });
  // An endless answer: only the cap ends it.
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const write = () => {
    while (response.write(chunk)) if (response.destroyed) return;
    response.once('drain', write);
  };
  write();
});

const noResolver = vi.fn(async () => {
  throw new Error('no name should be resolved');
});
const options = (overrides: Partial<DeliveryOptions> = {}): DeliveryOptions => ({
  timeoutMs: 2_000,
  maxResponseBytes: 16 * 1024,
  resolve: noResolver,
  ...overrides,
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
afterEach(() => vi.restoreAllMocks());

describe('deliverLogoutToken', () => {
  it('reads at most maxResponseBytes of the answer, and counts a 200 as delivered', async () => {
    expect(await deliverLogoutToken(`http://127.0.0.1:${port}/endless`, 'a.b.c', options())).toEqual({
      ok: true,
      status: 200,
    });
  });

  it('counts only 200 and 204 as delivered: any other 2xx, a 202 included, is a failure', async () => {
    // Back-Channel Logout 1.0 §2.8: "If the logout succeeded, the RP MUST respond with HTTP 200
    // OK"; 204 is what many frameworks send for an empty 200. A 202 only says it was queued.
    for (const status of [200, 204])
      expect(
        await deliverLogoutToken(`http://127.0.0.1:${port}/status/${status}`, 'a.b.c', options()),
      ).toEqual({
        ok: true,
        status,
      });
    for (const status of [201, 202, 203, 205, 206])
      expect(
        await deliverLogoutToken(`http://127.0.0.1:${port}/status/${status}`, 'a.b.c', options()),
      ).toEqual({
        ok: false,
        error: `HTTP ${status}`,
      });
  });

  it('gives up on a site that does not answer within the timeout', async () => {
    expect(
      await deliverLogoutToken(`http://127.0.0.1:${port}/silent`, 'a.b.c', options({ timeoutMs: 300 })),
    ).toEqual({
      ok: false,
      error: 'timed out after 300 ms',
    });
  });

  it('refuses a private IP literal and a loopback name answering a private address, before any connection', async () => {
    const connect = vi.spyOn(net.Socket.prototype, 'connect');
    for (const uri of ['https://10.0.0.1/bc', 'https://[fd00::1]/bc', 'https://169.254.169.254/latest'])
      expect((await deliverLogoutToken(uri, 'a.b.c', options())).ok, uri).toBe(false);
    expect(noResolver).not.toHaveBeenCalled();
    const rebinding = vi.fn(async () => [{ address: '10.0.0.7', family: 4 }]);
    expect(
      await deliverLogoutToken(`http://localhost:${port}/bc`, 'a.b.c', options({ resolve: rebinding })),
    ).toEqual({
      ok: false,
      error: 'refused: localhost resolves to 10.0.0.7, not an address a logout token may go to',
    });
    expect(rebinding).toHaveBeenCalledWith('localhost');
    expect(connect).not.toHaveBeenCalled();
  });

  it('connects a name to the address it checked, not to a later answer', async () => {
    // The resolver is asked once; the connection then goes to its (loopback) answer.
    const resolve = vi.fn(async () => [{ address: '127.0.0.1', family: 4 }]);
    expect(
      await deliverLogoutToken(`http://localhost:${port}/bc`, 'a.b.c', options({ resolve })),
    ).toMatchObject({
      ok: true,
    });
    expect(resolve).toHaveBeenCalledTimes(1);
  });
});
