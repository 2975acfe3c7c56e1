import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../context.js';
import { PENDING_SIGN_IN_TTL_MS } from '../modules/mfa/second-factor.service.js';
import { cookieName, cookieOptions } from './session.js';

/**
 * The browser's half of a pending sign-in (the password step, waiting for the
 * second factor): HttpOnly, SameSite=Lax, Secure on https, and no longer than the step itself.
 * Only its SHA-256 is stored, so the table alone cannot finish anyone's sign-in.
 */
const PENDING_COOKIE = 'idp_pending_sign_in';
const VALUE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The pending sign-in this browser presents, if it has the shape of one (not looked up). */
export function presentedPendingSignIn(request: FastifyRequest): string | null {
  const value = request.cookies[cookieName(PENDING_COOKIE, request)];
  return value && VALUE_PATTERN.test(value) ? value : null;
}

/** Binds a pending sign-in to this browser. */
export function setPendingSignInCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: Context,
  value: string,
) {
  reply.setCookie(cookieName(PENDING_COOKIE, request), value, {
    ...cookieOptions(ctx.config),
    maxAge: PENDING_SIGN_IN_TTL_MS / 1000,
  });
}

/** Forgets the pending sign-in of this browser (done, or expired). */
export function clearPendingSignInCookie(request: FastifyRequest, reply: FastifyReply, ctx: Context) {
  const { maxAge: _maxAge, ...attributes } = cookieOptions(ctx.config);
  reply.clearCookie(cookieName(PENDING_COOKIE, request), attributes);
}
