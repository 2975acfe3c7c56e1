import type { FastifyInstance } from 'fastify';
import { decodeBasicCredentials } from '../lib/basic-credentials.js';
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

/**
 * Where the first string (key or value) of a parsed query or body that is not acceptable text is:
 * the path of keys to it (empty for the input itself), or undefined when there is none.
 */
export function findUnacceptableText(input: unknown): string[] | undefined {
  const pending: Array<{ value: unknown; path: string[] }> = [{ value: input, path: [] }];
  while (pending.length > 0) {
    const { value, path } = pending.pop() as { value: unknown; path: string[] };
    if (typeof value === 'string') {
      if (!isAcceptableText(value)) return path;
    } else if (value !== null && typeof value === 'object' && path.length < MAX_DEPTH) {
      for (const [key, inner] of Object.entries(value)) {
        if (!isAcceptableText(key)) return [...path, key];
        pending.push({ value: inner, path: [...path, key] });
      }
    }
  }
  return undefined;
}

/** `body.description`: the place of a refused string, naming only keys of our own shape. */
function describePlace(part: string, path: string[]): string {
  return [part, ...path.map((key) => (/^[A-Za-z0-9_]{1,40}$/.test(key) ? key : '?'))].join('.');
}

function hasContent(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'object') return true;
  for (const _ in value) return true;
  return false;
}

/**
 * 400 `invalid_request` before any handler for a query, parameter, body or Basic credential that is
 * not acceptable text, so no handler, query, audit row or log line ever sees one.
 */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    // A bearer GET carries no query, parameters or body: nothing to walk on the hot path.
    const parts = { query: request.query, params: request.params, body: request.body };
    let place: string | undefined;
    for (const [part, value] of Object.entries(parts)) {
      const path = hasContent(value) ? findUnacceptableText(value) : undefined;
      if (path !== undefined) {
        place = describePlace(part, path);
        break;
      }
    }
    // The Basic credentials, decoded as client authentication will decode them.
    const credentials = decodeBasicCredentials(request.headers.authorization);
    if (
      place === undefined &&
      typeof credentials === 'object' &&
      !(isAcceptableText(credentials.clientId) && isAcceptableText(credentials.clientSecret))
    )
      place = 'the Basic credentials';
    if (place !== undefined) {
      done(
        new InvalidRequest(
          `${place} contains a NUL character or text that is not well-formed Unicode (a lone surrogate).`,
        ),
      );
      return;
    }
    done();
  });
}
