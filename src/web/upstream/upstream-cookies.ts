import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../context.js';
import { open, seal } from '../../lib/sealed-secret.js';
import { type TripChecks, UPSTREAM_TRIP_TTL_MS } from '../../modules/upstream/upstream-sign-in.service.js';
import { cookieName, cookieOptions } from '../session.js';

/*
 * The browser's half of a trip to a provider: its state, nonce and PKCE verifier, sealed
 * (AES-GCM under COOKIE_SECRET) so that only this service reads them and the database never holds
 * them. A callback whose `state` is not this browser's is refused: a sign-in started in one browser
 * cannot be finished in another (login CSRF, RFC 6749 §10.12). SameSite=Lax: the provider's
 * redirect back is a top-level GET (Apple's form_post is turned into one first).
 */
const TRIP_COOKIE = 'idp_upstream_trip';
const PENDING_COOKIE = 'idp_upstream_pending';
const TRIP_PURPOSE = 'upstream trip';
const PENDING_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const maxAge = UPSTREAM_TRIP_TTL_MS / 1000;

export function setTripCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: Context,
  checks: TripChecks,
): void {
  const value = seal(JSON.stringify(checks), ctx.config.COOKIE_SECRET, TRIP_PURPOSE);
  reply.setCookie(cookieName(TRIP_COOKIE, request), value, { ...cookieOptions(ctx.config), maxAge });
}

/** The checks this browser holds for its latest trip, or null. */
export function presentedTrip(request: FastifyRequest, ctx: Context): TripChecks | null {
  const value = request.cookies[cookieName(TRIP_COOKIE, request)];
  if (!value || value.length > 2000) return null;
  const plain = open(value, [ctx.config.COOKIE_SECRET, ...ctx.config.COOKIE_SECRET_PREVIOUS], TRIP_PURPOSE);
  if (!plain) return null;
  try {
    const checks = JSON.parse(plain) as Partial<TripChecks>;
    const fields = [checks.provider, checks.state, checks.nonce, checks.codeVerifier];
    return fields.every((field) => typeof field === 'string') ? (checks as TripChecks) : null;
  } catch {
    return null;
  }
}

export function clearTripCookie(request: FastifyRequest, reply: FastifyReply, ctx: Context): void {
  const { maxAge: _maxAge, ...attributes } = cookieOptions(ctx.config);
  reply.clearCookie(cookieName(TRIP_COOKIE, request), attributes);
}

/** The pending identity this browser holds (only its SHA-256 is stored). */
export function setPendingIdentityCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: Context,
  value: string,
): void {
  reply.setCookie(cookieName(PENDING_COOKIE, request), value, { ...cookieOptions(ctx.config), maxAge });
}

export function presentedPendingIdentity(request: FastifyRequest): string | null {
  const value = request.cookies[cookieName(PENDING_COOKIE, request)];
  return value && PENDING_PATTERN.test(value) ? value : null;
}

export function clearPendingIdentityCookie(request: FastifyRequest, reply: FastifyReply, ctx: Context): void {
  const { maxAge: _maxAge, ...attributes } = cookieOptions(ctx.config);
  reply.clearCookie(cookieName(PENDING_COOKIE, request), attributes);
}

const APPLE_USER_PURPOSE = 'upstream apple user';

/**
 * Apple's `user` field (the person's name and e-mail, posted once) sealed for the GET that carries
 * it on: the browser's history and the access logs see ciphertext, not the person.
 */
export function sealAppleUser(ctx: Context, user: string): string {
  return seal(user, ctx.config.COOKIE_SECRET, APPLE_USER_PURPOSE);
}

/** The `user` field our form-post route sealed; null for anything else (a plain value in a URL). */
export function openAppleUser(ctx: Context, sealed: string): string | null {
  return open(sealed, [ctx.config.COOKIE_SECRET, ...ctx.config.COOKIE_SECRET_PREVIOUS], APPLE_USER_PURPOSE);
}
