import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../context.js';
import { hashSecret } from '../lib/secrets.js';
import { cookieName, cookieOptions, presentedSessionId } from './session.js';

/**
 * CSRF: OWASP's signed double-submit cookie, bound to the session. Each form carries
 * HMAC-SHA256(COOKIE_SECRET, the HttpOnly cookie's random value + the session id's hash), so a
 * cross-site page cannot forge it and a cookie/token pair planted from another browser does not
 * match this browser's session. The HMAC is @fastify/cookie's signer (constant-time check).
 */
export const CSRF_COOKIE = 'idp_csrf';

/** The form field every POST form of the service carries. */
export const CSRF_FIELD = 'csrf_token';

const COOKIE_VALUE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** An HMAC-SHA256 in base64url without padding. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The CSRF cookie value each request settled on (read or newly set), so one request issues one token. */
const issued = new WeakMap<FastifyRequest, string>();

function presentedCookie(request: FastifyRequest): string | null {
  const value = request.cookies[cookieName(CSRF_COOKIE, request)];
  return value && COOKIE_VALUE_PATTERN.test(value) ? value : null;
}

/** What a token is bound to: the CSRF cookie's value and the browser's session (none: anonymous). */
function signedPart(request: FastifyRequest, cookieValue: string): string {
  const session = presentedSessionId(request);
  return `${cookieValue}.${session ? hashSecret(session) : 'anonymous'}`;
}

function tokenFor(signer: Pick<FastifyReply, 'signCookie'>, signedValue: string): string {
  const signed = signer.signCookie(signedValue); // `<value>.<base64 HMAC without padding>`
  return signed
    .slice(signedValue.length + 1)
    .replaceAll('+', '-')
    .replaceAll('/', '_');
}

/**
 * The CSRF token to put in a form. Reuses the browser's CSRF cookie when it has a well-formed one,
 * else sets a new one (256 bits); the cookie's lifetime is renewed either way. `ctx` gives the
 * cookie attributes (Secure when PUBLIC_URL is https; Max-Age = SESSION_TTL_SECONDS).
 */
export function issueCsrfToken(request: FastifyRequest, reply: FastifyReply, ctx: Context): string {
  let value = issued.get(request) ?? presentedCookie(request);
  if (!value) value = randomBytes(32).toString('base64url');
  issued.set(request, value);
  // The session cookie's attributes: HttpOnly, SameSite=Lax, Path=/, Secure on https, Max-Age.
  reply.setCookie(cookieName(CSRF_COOKIE, request), value, cookieOptions(ctx.config));
  return tokenFor(reply, signedPart(request, value));
}

/** Whether a submitted CSRF token belongs to this browser's CSRF cookie (constant-time). */
export function verifyCsrfToken(request: FastifyRequest, token: unknown): boolean {
  if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) return false;
  const value = presentedCookie(request);
  if (!value) return false;
  const signature = token.replaceAll('-', '+').replaceAll('_', '/');
  return request.unsignCookie(`${signedPart(request, value)}.${signature}`).valid;
}
