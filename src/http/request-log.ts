import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { levels } from 'pino';
import { ApiError } from '../lib/errors.js';
import { redactUrl } from './logger.js';

/**
 * What a request's line says besides its method, URL, status and time: who made it, when known,
 * and why it was refused. Never a secret: a client_id is public, a user id is our own number, and
 * an error's code and description are what the caller was told anyway.
 */
export interface RequestLogFields {
  /** The client the request presented (token endpoint) or whose token it carried (bearer routes). */
  client_id?: string;
  user_id?: number;
  /** The contract's error code of a refusal (RFC 6749 §5.2, §4.1.2.1; RFC 6750 §3.1). */
  error?: string;
  error_description?: string;
  /** Why, when the caller is told less than the log (an ApiError's `detail`, a token's refusal). */
  error_detail?: string;
}

const noted = new WeakMap<FastifyRequest, RequestLogFields>();
/** The refusal each request was answered with (see `answeredError`). */
const answered = new WeakMap<FastifyRequest, ApiError>();

/** Adds fields to the request's one log line (the last value given for a field wins). */
export function noteRequestLog(request: FastifyRequest, fields: RequestLogFields): void {
  const current = noted.get(request);
  noted.set(request, current ? Object.assign(current, fields) : { ...fields });
}

/** A client_id the caller sent, as it may be logged: bounded, since nobody has checked it yet. */
export function presentedClientId(clientId: string): string {
  return clientId.length > 100 ? `${clientId.slice(0, 100)}…` : clientId;
}

/**
 * Puts an error answer's code and description on the request's line. An error that was turned
 * into another for its answer (an authorize or logout problem shown as a page) is logged as the
 * error it was, whose code says more than the page's kind.
 */
export function noteErrorAnswer(request: FastifyRequest, error: ApiError): void {
  const reason = error.cause instanceof ApiError ? error.cause : error;
  answered.set(request, reason);
  noteRequestLog(request, {
    error: reason.error,
    error_description: reason.description,
    ...(reason.detail ? { error_detail: reason.detail } : {}),
  });
}

/**
 * The error a request was answered with, as its log line names it, whether thrown to the error
 * handler or answered by a redirect (RFC 6749 §4.1.2.1): the one place an answer's refusal is known.
 */
export function answeredError(request: FastifyRequest): ApiError | undefined {
  return answered.get(request);
}

/** Response times in milliseconds, to the hundredth: finer is noise. */
const toHundredths = (ms: number) => Math.round(ms * 100) / 100;

/**
 * Writes the request's one line: method, redacted URL, status, time, the caller's address, and
 * the fields noted while it ran. Info below 500, warn from 500 on (an unexpected error has its own
 * error line, with the stack); refusals are info, since a client's mistake is not the service's;
 * a passing health probe is debug.
 */
export function logRequestLine(
  request: FastifyRequest,
  statusCode: number,
  responseTime: number,
  error?: Error | null,
): void {
  const level =
    statusCode >= 500 || error
      ? 'warn'
      : // A load balancer's probes come every few seconds from every balancer: a passing one is debug.
        statusCode < 300 && request.routeOptions.url?.startsWith('/health/')
        ? 'debug'
        : 'info';
  // Below the configured level (production often runs at warn) the line is not even built.
  const threshold = levels.values[request.log.level] ?? Number.POSITIVE_INFINITY; // `silent`: none
  if ((levels.values[level] ?? 0) < threshold) return;
  request.log[level](
    {
      method: request.method,
      url: redactUrl(request.url),
      statusCode,
      responseTime: toHundredths(responseTime),
      remoteAddress: request.ip,
      ...noted.get(request),
      ...(error ? { err: error } : {}),
    },
    'request completed',
  );
}

/**
 * Fastify's request logging, one line per request instead of its two ("incoming request", then
 * "request completed" with only the status): the line is written once the answer is sent, when
 * everything about the request is known.
 */
export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    logRequestLine(request, reply.statusCode, reply.elapsedTime, error);
  }
}
