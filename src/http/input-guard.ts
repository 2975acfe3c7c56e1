import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidRequest } from '../lib/errors.js';

/**
 * Whether a string may enter the service: well-formed UTF-16 (no lone surrogate, which JSON's
 * `\ud800` escape can carry and which the drivers would silently store as U+FFFD) and no NUL, which
 * PostgreSQL's text types cannot hold at all (SQLSTATE 22021) and which no field has a use for.
 */
export function isAcceptableText(value: string): boolean {
  return value.isWellFormed() && !value.includes('\u0000');
}

/** Nesting this deep is no request of ours; the walk stops there (the schemas refuse the rest). */
const MAX_DEPTH = 32;

/** The first string (key or value) in a parsed query or body that is not acceptable text, or undefined. */
export function findUnacceptableText(input: unknown): string | undefined {
  const pending: Array<{ value: unknown; depth: number }> = [{ value: input, depth: 0 }];
  while (pending.length > 0) {
    const { value, depth } = pending.pop() as { value: unknown; depth: number };
    if (typeof value === 'string') {
      if (!isAcceptableText(value)) return value;
    } else if (value !== null && typeof value === 'object' && depth < MAX_DEPTH) {
      for (const [key, inner] of Object.entries(value)) {
        if (!isAcceptableText(key)) return key;
        pending.push({ value: inner, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

/**
 * The client credentials of `Authorization: Basic`, decoded as the token endpoint will decode them,
 * so that a NUL or a lone surrogate there is refused like one in the body.
 */
function basicCredentials(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  try {
    return decodeURIComponent(decoded.replace(/\+/g, ' '));
  } catch {
    return decoded; // not form-encoded: client authentication refuses it with invalid_client
  }
}

function hasContent(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'object') return true;
  for (const _ in value) return true;
  return false;
}

/**
 * Refuses, once and before any handler, a request whose query, route parameters, body or Basic
 * credentials carry a string that is not acceptable text: 400 `invalid_request` (the error page on
 * browser routes, through the one error handler). Behind this hook no handler, query, audit row or
 * log line ever sees such a string.
 */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    // A bearer GET carries no query, parameters or body: nothing to walk on the hot path.
    const parts = [request.query, request.params, request.body];
    let bad = false;
    for (const part of parts) {
      if (hasContent(part) && findUnacceptableText(part) !== undefined) {
        bad = true;
        break;
      }
    }
    const credentials = basicCredentials(request);
    if (bad || (credentials !== undefined && !isAcceptableText(credentials))) {
      done(
        new InvalidRequest(
          'The request contains a NUL character or text that is not well-formed Unicode (a lone surrogate).',
        ),
      );
      return;
    }
    done();
  });
}
