import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * What the process answers before any route runs, over a real socket: every error is in the
 * contract's shape, and a client still sending a body that is too large reads the 413.
 */

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(() => t.close());

/** Sends raw bytes and reads everything until the server closes. */
function rawExchange(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk;
    });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

function parse(response: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head, body: JSON.parse(body) };
}

describe('errors raised by the HTTP parser are in the contract shape', () => {
  it('a malformed header line: 400 invalid_request', async () => {
    const res = parse(await rawExchange('GET /api/v1/ HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n'));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ ok: false, error: 'invalid_request', error_description: expect.any(String) });
    expect(res.headers).toMatch(/content-type: application\/json/i);
  });

  it('a malformed request line: 400 invalid_request', async () => {
    const res = parse(await rawExchange('GET\r\n\r\n'));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ ok: false, error: 'invalid_request' });
  });

  it('headers over the size limit: 431 in the contract shape', async () => {
    const res = parse(
      await rawExchange(`GET /api/v1/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(res.status).toBe(431);
    expect(res.body).toEqual({ ok: false, error: 'invalid_request', error_description: expect.any(String) });
  });
});

describe('a URL the router cannot decode', () => {
  it.each(['/api/v1/%', '/%E0%A4%A', '/signin/%ZZ'])(
    '%s: 400 invalid_request, without the URL',
    async (url) => {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({
        ok: false,
        error: 'invalid_request',
        error_description: expect.any(String),
      });
      expect(res.body).not.toContain('%');
    },
  );
});

describe('a body over 1 MiB', () => {
  /**
   * Writes a 5 MB form body to the end, as a simple client does, and only then reads the answer.
   * Fails with the write error (EPIPE, ECONNRESET) if the server closed while the client wrote.
   */
  function postLargeBody(headers: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      let written = false;
      const finish = () => {
        if (written && /\r\n\r\n[\s\S]*\}$/.test(received)) {
          socket.destroy();
          resolve(received);
        }
      };
      socket.on('data', (chunk) => {
        received += chunk;
        finish();
      });
      socket.on('error', reject);
      socket.write(`POST /api/v1/oauth/token HTTP/1.1\r\nHost: x\r\n${headers}\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const chunked = headers.includes('chunked');
      const parts: Buffer[] = [];
      for (let i = 0; i < 80; i++)
        parts.push(chunked ? Buffer.concat([Buffer.from('10000\r\n'), chunk, Buffer.from('\r\n')]) : chunk);
      if (chunked) parts.push(Buffer.from('0\r\n\r\n'));
      socket.write(Buffer.concat(parts), (error) => {
        if (error) return reject(error);
        written = true;
        finish();
      });
    });
  }

  it.each([
    ['with Content-Length', 'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 5242880\r\n'],
    ['chunked', 'Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n'],
  ])('%s: the client that is still writing reads the 413 payload_too_large', async (_name, headers) => {
    const res = parse(await postLargeBody(headers));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      ok: false,
      error: 'payload_too_large',
      error_description: expect.any(String),
    });
  });

  it('Node http client: the 413 arrives, and the connection can be used again', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (body: Buffer) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/v1/oauth/token',
            agent,
            headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': body.length },
          },
          (res) => {
            let text = '';
            res.on('data', (chunk) => {
              text += chunk;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const large = await send(Buffer.alloc(5 * 1024 * 1024, 'a'));
    expect(large.status).toBe(413);
    expect(JSON.parse(large.body)).toMatchObject({ error: 'payload_too_large' });
    const small = await send(Buffer.from('grant_type=x'));
    expect(small.status).toBe(401);
    agent.destroy();
  });
});

describe('requests Node hands past the router', () => {
  it('CONNECT: 405 method_not_allowed in the contract shape, then the connection closes', async () => {
    const raw = await rawExchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const res = parse(raw);
    expect(res.status).toBe(405);
    expect(res.body).toEqual({
      ok: false,
      error: 'method_not_allowed',
      error_description: expect.any(String),
    });
    expect(res.headers).toMatch(/^allow: $/im);
    expect(res.headers).toMatch(/^x-request-id: [0-9a-f-]{36}$/im);
    expect(res.headers).toMatch(/^connection: close$/im);
    // The server still answers.
    expect((await t.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
  });

  it.each([
    [
      'websocket',
      'Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13',
    ],
    ['h2c', 'Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA'],
  ])('an Upgrade to %s is answered by its route, as an ordinary request', async (_name, headers) => {
    const raw = await rawExchange(
      `GET /api/v1/no-such-route HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\n${headers}\r\n\r\n`,
    );
    const res = parse(raw);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ ok: false, error: 'not_found' });
  });
});
