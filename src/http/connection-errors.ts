import { randomUUID } from 'node:crypto';
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, InvalidRequest } from '../lib/errors.js';
import { redactUrl } from './logger.js';
import { logRequestLine, noteErrorAnswer } from './request-log.js';

/**
 * Whether an error came from reading the request, not from the service: Node destroys a request
 * whose connection closed before its end with an `aborted` error whose code is ECONNRESET (the
 * code a database's reset socket has too), and Fastify's body reading and parsing fail with
 * FST_ERR_CTP_… codes. With the request at hand, the error its stream was destroyed with is one.
 */
export function isRequestStreamError(error: unknown, request?: FastifyRequest): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if (request && error === request.raw.errored) return true;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && code.startsWith('FST_ERR_CTP_')) return true;
  return code === 'ECONNRESET' && message === 'aborted';
}

/** The answer to a request whose client went away mid-request: nobody reads it, but its line says so. */
export const requestCutShort = () =>
  new InvalidRequest('The connection closed before the request arrived in full.');

/** Whether the client has gone before its request arrived in full (its connection closed or reset). */
export function clientHungUp(request: FastifyRequest): boolean {
  const raw = request.raw;
  return !raw.complete && (raw.destroyed || raw.socket?.destroyed === true);
}

/**
 * The one line of a request whose client hung up (a browser tab closed mid-upload, a client's
 * timeout): info, since nothing is wrong with the service, and saying whose it is, so that the
 * ECONNRESET is not taken for the database's.
 */
export function logClientHangUp(request: FastifyRequest, error: unknown): void {
  const { code, message } = error as { code?: unknown; message?: unknown };
  request.log.info(
    {
      method: request.method,
      url: redactUrl(request.url),
      remoteAddress: request.ip,
      // Not `code`, which the logger redacts (an authorization code's field).
      reason: `${String(message).slice(0, 200)}${typeof code === 'string' ? ` (${code})` : ''}`,
    },
    'client hung up before its request arrived in full',
  );
}

/** What Node's HTTP parser refuses before any route runs, in the contract's words. */
function parserError(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, 'invalid_request', 'The request headers are larger than this server accepts.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, 'invalid_request', 'The request took too long to arrive.');
    default:
      return new ApiError(400, 'invalid_request', 'The request line or a header is malformed HTTP.');
  }
}

/**
 * Fastify's `clientErrorHandler`: a request Node's parser refused (a malformed request line or
 * header, headers over the size limit, a timeout) is answered with the contract's body, not
 * Fastify's `{"error":"Bad Request",…}`, and the connection is closed, as Node does.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody to answer (https://nodejs.org/api/http.html#event-clienterror).
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError = parserError(error.code);
  const body = JSON.stringify(apiError.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\nConnection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

/**
 * The server's `connect` listener. Node hands a CONNECT request (RFC 9110 §9.3.6: open a tunnel,
 * a proxy's job) to it instead of to Fastify, and without one closes the connection without a
 * word. This server is no proxy: a 405 in the contract's shape, with an empty `Allow` (the tunnel's
 * target allows no method here; RFC 9110 §10.2.1), then the connection is closed, since what
 * follows the request would be the tunnel's bytes.
 */
export function answerConnect(log: FastifyBaseLogger) {
  return (request: IncomingMessage, socket: Duplex): void => {
    // Node removed its own listener: a reset must not become an uncaught error.
    socket.on('error', () => socket.destroy());
    const id = randomUUID();
    const body = JSON.stringify({
      ok: false,
      error: 'method_not_allowed',
      error_description: 'CONNECT is not supported: this server is not a proxy.',
    });
    socket.end(
      'HTTP/1.1 405 Method Not Allowed\r\nAllow: \r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
    // No route runs: the request's one line is written here, as for every other refusal.
    log.info(
      {
        reqId: id,
        method: 'CONNECT',
        url: (request.url ?? '').slice(0, 200),
        statusCode: 405,
        remoteAddress: request.socket?.remoteAddress,
        error: 'method_not_allowed',
      },
      'request completed',
    );
  };
}

/**
 * The pages' paths that take a path parameter (the console's, the developer portal's, a provider's
 * sign-in): a browser there gets a page, not JSON, with the way back to where it was.
 */
const PAGE_PATHS: ReadonlyArray<{ path: RegExp; home: string; back: string }> = [
  { path: /^\/admin(\/|$)/, home: '/admin', back: 'Back to the console' },
  { path: /^\/developers(\/|$)/, home: '/developers', back: 'Back to the developer portal' },
  { path: /^\/signin\/providers\//, home: '/signin', back: 'Back to sign-in' },
  {
    path: /^\/account\/(providers|reauthenticate\/providers)\//,
    home: '/account',
    back: 'Back to your account',
  },
];

/** A plain page for a router error on a page's path: no route ran, so not the pages' own renderer. */
function routerErrorPage(error: ApiError, way: { home: string; back: string }): string {
  const title = `${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`;
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><p>${error.description}</p><p><a href="${way.home}">${way.back}</a></p></html>`;
}

/**
 * Router errors (a malformed percent-encoding, a parameter over the length limit) in the contract's
 * words: Fastify's own body repeats the URL. No route has run, so the answer is written raw: JSON,
 * or on the console's paths a plain page with the pages' strictest policy (nothing to load).
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const apiError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError(414, 'invalid_request', 'A part of the path is longer than this server accepts.')
      : new ApiError(
          400,
          'invalid_request',
          'The path of the URL is not valid: a percent-encoding is malformed.',
        );
  const page = PAGE_PATHS.find((each) => each.path.test(request.url));
  const body = page ? routerErrorPage(apiError, page) : JSON.stringify(apiError.toBody());
  reply.raw.writeHead(apiError.status, {
    'content-type': page ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...(page
      ? {
          'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
          'x-content-type-options': 'nosniff',
        }
      : {}),
    // No hook runs for this answer: the id every other one gets from the onRequest hook.
    'x-request-id': request.id,
  });
  reply.raw.end(body);
  // Nor does Fastify's request logging: the line is written here.
  noteErrorAnswer(request, apiError);
  logRequestLine(request, apiError.status, reply.elapsedTime);
}

/** How much of a body that was answered before it was read is still read and dropped. */
const LINGER_MAX_BYTES = 64 * 1024 * 1024;
const LINGER_MAX_MS = 10_000;

/**
 * A response sent before the request's body was read (a 413 for a body over the limit, usually)
 * must reach a client that is still sending: closing the connection at once makes the client's
 * next write fail with EPIPE or a reset, and it never reads the answer. So the connection stays
 * open (Node reads and drops the rest of the body, as for any unread body), within a bound of
 * bytes and time after which it is closed (the lingering close of HTTP/1.1 servers; RFC 9112 §9.6).
 */
export function installLingeringClose(app: FastifyInstance): void {
  // Fastify asks to close at once after a body over the limit; this closes after lingering instead.
  // (Installed before the shutdown hook, which asks to close every response while draining.)
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 413 && !request.raw.complete) reply.removeHeader('connection');
    done(null, payload);
  });
  app.addHook('onResponse', (request, _reply, done) => {
    const raw = request.raw;
    // Injected requests (tests, the CLI's socket) have no real socket to keep open.
    if (raw.complete || raw.destroyed || typeof raw.socket?.destroy !== 'function') return done();
    let received = 0;
    const stop = () => {
      clearTimeout(timer);
      raw.off('data', count);
      if (!raw.complete) raw.socket?.destroy();
    };
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > LINGER_MAX_BYTES) stop();
    };
    const timer = setTimeout(stop, LINGER_MAX_MS);
    timer.unref();
    raw.on('data', count);
    raw.once('end', () => {
      clearTimeout(timer);
      raw.off('data', count);
    });
    raw.resume();
    done();
  });
}
