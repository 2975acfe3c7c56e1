import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../context.js';
import { hashSecret } from '../lib/secrets.js';
import type { TrustedSource } from '../modules/accounts/accounts.service.js';
import { cookieName, cookieOptions } from './session.js';

/**
 * The device cookie of OWASP's "Slow Down Online Guessing Attacks with Device Cookies": a browser
 * that signed in to an account gets a signed cookie naming that account and a random nonce. Its
 * later password checks for that account count against a budget of its own, so a stranger who
 * uses up the account's budget for unknown browsers does not lock the owner out.
 */
const DEVICE_COOKIE = 'idp_device';
const DEVICE_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 3600;
const VALUE_PATTERN = /^(\d{1,15})\.([A-Za-z0-9_-]{22})$/;

/** The account and nonce of this browser's device cookie, when it has a genuine one. */
function presented(request: FastifyRequest): { userId: number; nonce: string } | null {
  const raw = request.cookies[cookieName(DEVICE_COOKIE, request)];
  if (!raw) return null;
  const unsigned = request.unsignCookie(raw);
  const match = unsigned.valid && unsigned.value ? VALUE_PATTERN.exec(unsigned.value) : null;
  return match ? { userId: Number(match[1]), nonce: match[2] as string } : null;
}

/** The budget this browser's password checks count against, for `authenticate`. */
export function trustedBrowser(request: FastifyRequest): TrustedSource {
  const device = presented(request);
  return (userId) => (device?.userId === userId ? `device:${hashSecret(device.nonce)}` : undefined);
}

/** After a successful sign-in: this browser is one the account signed in from (a new nonce if it had none for it). */
export function rememberBrowser(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: Context,
  userId: number,
): void {
  const current = presented(request);
  const nonce = current?.userId === userId ? current.nonce : randomBytes(16).toString('base64url');
  reply.setCookie(cookieName(DEVICE_COOKIE, request), `${userId}.${nonce}`, {
    ...cookieOptions(ctx.config),
    maxAge: DEVICE_COOKIE_MAX_AGE_SECONDS,
    signed: true,
  });
}

/**
 * This browser's device cookie, whichever account it names (`<user id>.<nonce hash>`), or undefined
 * without a genuine one: the per-account minute limit (src/http/rate-limit.ts) gives such a browser
 * a bucket of its own, which no one without the signed cookie can spend.
 */
export function browserDeviceKey(request: FastifyRequest): string | undefined {
  const device = presented(request);
  return device ? `${device.userId}.${hashSecret(device.nonce)}` : undefined;
}
