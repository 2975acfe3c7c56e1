import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/errors.js';
import { prefersHtml } from '../lib/accept.js';
import {
  AccessDenied,
  ApiError,
  InvalidRequest,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ServerError,
  Unauthorized,
  Unavailable,
} from '../lib/errors.js';
import { clientHungUp, isRequestStreamError, logClientHangUp, requestCutShort } from './connection-errors.js';
import { noteErrorAnswer } from './request-log.js';
import type { RouteRegistry } from './route-registry.js';

interface ValidationIssue {
  instancePath?: string;
  message?: string;
}

/** "body.amount: Invalid input: expected number, received string" */
function describeValidation(error: FastifyError): string {
  const context =
    error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'request');
  const issues = (error.validation ?? []) as ValidationIssue[];
  const parts = issues.slice(0, 3).map((issue) => {
    // A path segment can be a key the caller sent: only names of our own shape are repeated.
    const field = (issue.instancePath ?? '')
      .split('/')
      .filter(Boolean)
      .map((segment) => (/^[A-Za-z0-9_]{1,40}$/.test(segment) ? segment : '?'))
      .join('.');
    return `${field ? `${context}.${field}` : context}: ${issue.message ?? 'is invalid'}`;
  });
  return parts.length > 0 ? `Invalid ${context}: ${parts.join('; ')}` : `Invalid ${context}.`;
}

/** Fastify's own 4xx errors (body parsing, content type, URL) in the contract's words. */
function fromFastifyClientError(error: FastifyError, status: number): ApiError {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new InvalidRequest(
        'Unsupported Content-Type; send application/json or application/x-www-form-urlencoded.',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InvalidRequest('The body is empty but Content-Type is application/json.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new InvalidRequest('The body is not valid JSON.');
  }
  if (error instanceof SyntaxError) return new InvalidRequest('The body is not valid JSON.');
  switch (status) {
    case 401:
      return new Unauthorized();
    case 403:
      return new AccessDenied();
    case 404:
      return new NotFound();
    case 413:
      return new PayloadTooLarge();
    case 429:
      return new RateLimited();
    default:
      // Fastify's own messages may quote the request (a header, a content type): never echoed.
      return new InvalidRequest('The request is malformed.');
  }
}

/**
 * Turns anything thrown into an ApiError. Unknown errors become a fixed 500 text: never echoed.
 * An error reading the request is the client's, whatever its code: a client that hung up
 * mid-upload fails with ECONNRESET as a database's reset connection does.
 */
export function toApiError(error: unknown, request?: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) return new InvalidRequest(describeValidation(fastifyError));
  const fromRequest = isRequestStreamError(error, request);
  if (fromRequest && !fastifyError.code?.startsWith('FST_ERR_CTP_')) return requestCutShort();
  if (!fromRequest && isDatabaseUnavailable(error)) return new Unavailable(undefined, { cause: error });
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return fromFastifyClientError(fastifyError, status);
  return new ServerError(undefined, { cause: error });
}

/** Answers with the contract's error body; the request's log line says which error and why. */
export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  noteErrorAnswer(reply.request, error);
  return reply.code(error.status).headers(error.headers).send(error.toBody());
}

/** How a browser route answers an error: a page in the reader's language (src/web/). */
export type BrowserErrorRenderer = (reply: FastifyReply, error: ApiError) => FastifyReply;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A page for browsers only (`Accept` prefers text/html); other callers get JSON, errors included. */
    pageByAccept?: boolean;
  }
}

/**
 * The API's paths answer JSON to every caller, a browser included, as api.github.com and Google's
 * APIs do whatever the `Accept`: a developer opening an unknown API URL sees the error body.
 */
function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/') || path.startsWith('/.well-known/');
}

/**
 * Whether an error is answered with a page: always on a browser route (sign-in, authorize…); on
 * the landing page and on paths no route serves (404, 405, and a 429 there), when `Accept` prefers
 * HTML (RFC 9110 §12.5.1) and the path is not the API's; JSON everywhere else.
 */
function answersWithPage(request: FastifyRequest): boolean {
  const config = request.routeOptions.config;
  if (config?.pageByAccept) return prefersHtml(request.headers.accept);
  if (config?.auth !== undefined) return config.auth === 'browser';
  return !isApiPath(request.url.split('?', 1)[0] ?? '/') && prefersHtml(request.headers.accept);
}

/**
 * Errors in the contract's JSON shape for every route of this plugin, even browser routes: the
 * endpoints a page script calls (passkey ceremonies) answer JSON, never an error page.
 */
export function answerErrorsAsJson(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError instanceof ServerError) request.log.error({ err: error }, 'unhandled error');
    return sendApiError(reply, apiError);
  });
}

/** The 404 of a path no route serves; the path, the caller's input, is not repeated. */
export function noRoute(method: string): ApiError {
  return new NotFound(`No route for ${method} at this path; GET /api/v1/ lists every route.`);
}

/** Installs the one error handler, the 404/405 handler, and the 503 answer while shutting down. */
export function installErrorHandling(
  app: FastifyInstance,
  registry: RouteRegistry,
  renderBrowserError: BrowserErrorRenderer,
): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error, request);
    // Nobody reads the answer; the log says the client went, not the database.
    if (isRequestStreamError(error, request) && clientHungUp(request)) {
      logClientHangUp(request, error);
      return sendApiError(reply, apiError);
    }
    if (apiError instanceof ServerError) {
      request.log.error({ err: error }, 'unhandled error');
    } else if (apiError instanceof Unavailable) {
      request.log.warn({ err: apiError.cause ?? error }, 'service unavailable');
    }
    // A refusal is not logged on a line of its own: the request's line carries its code and reason.
    noteErrorAnswer(request, apiError);
    // A browser on a page (or the authorize endpoint, or a path outside the API) gets a page, with
    // the contract's status and headers (Retry-After on 429); every other caller the JSON body.
    if (answersWithPage(request)) {
      reply.headers(apiError.headers);
      return renderBrowserError(reply, apiError);
    }
    return sendApiError(reply, apiError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '/';
    const allowed = registry.allowedMethods(path);
    const error =
      allowed.length > 0 ? new MethodNotAllowed(request.method, allowed) : noRoute(request.method);
    if (answersWithPage(request)) {
      noteErrorAnswer(request, error);
      reply.headers(error.headers);
      return renderBrowserError(reply, error);
    }
    return sendApiError(reply, error);
  });

  // While draining for shutdown, a request that arrives on a kept-alive connection is served as
  // any other (the database stays open until the drain ends): a 503 would fail a client's code
  // exchange or refresh, which a load balancer does not retry (RFC 9110 §9.2.2). Every answer
  // closes its connection, so that a kept-alive client cannot hold the drain open.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Synchronous hook (with `done`): it runs on every request and costs no promise.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}
