import type { FastifyRequest } from 'fastify';
import { decodeBasicCredentials } from '../lib/basic-credentials.js';
import { browserDeviceKey } from '../web/device-cookie.js';
import { requiredSession } from '../web/page-guards.js';

/*
 * What the rate limits of src/http/rate-limit.ts count by, besides the address. Each key is read
 * from what the request has proved by the time it is counted, so that nobody spends a limit that
 * belongs to someone else (README "Rate limits").
 */

/** The username a sign-in form names, bounded before NFKC (which can take a fraction of a second on a megabyte). */
function namedAccount(request: FastifyRequest): string | undefined {
  const username = (request.body as { username?: unknown } | undefined)?.username;
  if (typeof username !== 'string' || username.length === 0) return undefined;
  return username.slice(0, 128).normalize('NFKC').toLowerCase().slice(0, 128);
}

/**
 * The per-account key of a route that checks a password, read once the CSRF check passed:
 * - a signed-in account's form (`session: 'required'`): the session's user, never a field of the
 *   form, which the browser may change;
 * - the sign-in form: the username it names, and for a browser holding a signed device cookie
 *   (OWASP's device cookies, src/web/device-cookie.ts) that browser's own bucket of that name, so
 *   strangers who spend the name's shared bucket do not lock the owner's browser out. A stranger's
 *   own device cookie only buys a bucket of its own; the address's limit and the account's
 *   database budget for unknown browsers still bound it.
 */
export function accountKey(request: FastifyRequest): string | undefined {
  if (request.routeOptions.config.session === 'required') return `user:${requiredSession(request).userId}`;
  const name = namedAccount(request);
  if (name === undefined) return undefined;
  const device = browserDeviceKey(request);
  return device === undefined ? `name:${name}` : `name:${name}|device:${device}`;
}

/** The client a client-authenticated request names: its Basic credentials' id, or `client_id` in the form body. */
export function namedClientId(request: FastifyRequest): string | undefined {
  const basic = decodeBasicCredentials(request.headers.authorization);
  if (basic !== undefined) return basic === 'malformed' ? undefined : basic.clientId.slice(0, 200);
  const posted = (request.body as { client_id?: unknown } | undefined)?.client_id;
  return typeof posted === 'string' ? posted.slice(0, 200) : undefined;
}

/**
 * A public client's limit is kept per address too: it proves nothing but its public `client_id`
 * (RFC 6749 §2.1), so requests from one address must not use up every other user's.
 */
export function publicClientKey(clientId: string, ip: string): string {
  return `${clientId}|${ip}`;
}
