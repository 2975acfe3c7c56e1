import { randomBytes } from 'node:crypto';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Deps } from '../context.js';
import { noteRequestLog } from '../http/request-log.js';
import { type AuthenticationMethod, PASSWORD_ONLY } from '../lib/amr.js';
import { hashSecret } from '../lib/secrets.js';
import { endBrowserSessions } from '../modules/accounts/session-end.service.js';
import {
  findActiveSession,
  insertSession,
  takeLiveSessionOf,
} from '../modules/accounts/sessions.repository.js';

/** A signed-in browser. */
export interface BrowserSession {
  idHash: string;
  /** The public session id: the `sid` of id_tokens and logout tokens (Back-Channel Logout 1.0 §2.4). */
  sid: string;
  userId: number;
  /** When the user last entered their password (OIDC `auth_time`). */
  authTime: Date;
  /** How the user signed in (RFC 8176). */
  amr: readonly string[];
}

export const SESSION_COOKIE = 'idp_session';

/**
 * A cookie's name: with the `__Host-` prefix when the service is served over https, which browsers
 * accept only with Secure, Path=/ and no Domain (RFC 6265bis §4.1.3.2), so no other host of the
 * domain, and no plain-http page, can set or overwrite it (a planted session or CSRF cookie).
 */
export function cookieName(name: string, request: FastifyRequest): string {
  return request.server.secureCookies ? `__Host-${name}` : name;
}

/** 32 bytes of CSPRNG output in base64url: what every session id we issue looks like. */
const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Longest user agent kept with a session (it is informational only). */
const USER_AGENT_MAX_LENGTH = 512;

/**
 * Attributes shared by the service's cookies: HttpOnly (no script reads them), SameSite=Lax (not
 * sent on cross-site POSTs), Path=/, and Secure whenever the service is served over https.
 */
export function cookieOptions(config: Config): CookieSerializeOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: config.PUBLIC_URL.startsWith('https:'),
    maxAge: config.SESSION_TTL_SECONDS,
  };
}

/** One lookup per request, however many parts of the request ask. */
const loaded = new WeakMap<FastifyRequest, Promise<BrowserSession | null>>();

/** The session id the browser presented, if it has the shape of one (not looked up). */
export function presentedSessionId(request: FastifyRequest): string | null {
  const value = request.cookies[cookieName(SESSION_COOKIE, request)];
  return value && SESSION_ID_PATTERN.test(value) ? value : null;
}

/**
 * The browser session of this request, or null: no cookie, an unknown or expired session, or a
 * disabled user. Memoized per request.
 */
export function loadSession(request: FastifyRequest, deps: Deps): Promise<BrowserSession | null> {
  let session = loaded.get(request);
  if (!session) {
    session = lookUp(request, deps);
    loaded.set(request, session);
  }
  return session;
}

async function lookUp(request: FastifyRequest, deps: Deps): Promise<BrowserSession | null> {
  const id = presentedSessionId(request);
  if (!id) return null;
  const row = await findActiveSession(deps.db, hashSecret(id), deps.ctx.clock.now());
  if (!row) return null;
  // The signed-in user, on the request's log line (never the session id: it is the credential).
  noteRequestLog(request, { user_id: row.userId });
  return { idHash: row.idHash, sid: row.sid, userId: row.userId, authTime: row.authTime, amr: row.amr };
}

/**
 * Starts a session for a user who just signed in. The session id is always new (256 bits), and the
 * session this browser held before, if any, ends: rotating the id at sign-in defeats session
 * fixation (OWASP Session Management), and the sites of the ended one get logout tokens, queued in
 * the transaction that starts the new one. Only the id's SHA-256 hash is stored;
 * the `sid`, made by the database, is a separate random value, public. `amr` says how the user signed in.
 */
export async function startSession(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  userId: number,
  amr: readonly AuthenticationMethod[] = PASSWORD_ONLY,
): Promise<BrowserSession> {
  const { ctx } = deps;
  const { clock, config } = ctx;
  const previous = presentedSessionId(request);
  const id = randomBytes(32).toString('base64url');
  const now = clock.now();
  const idHash = hashSecret(id);
  const sid = await deps.db.transaction().execute(async (trx) => {
    // Signing in again to the same account (prompt=login, max_age, a second factor added) continues
    // the session under a new cookie id: the same `sid`, so the sites signed in with it stay signed
    // in. Another account's sign-in ends it, and its sites get their logout tokens.
    const continued = previous
      ? await takeLiveSessionOf(trx, { idHash: hashSecret(previous), userId, now })
      : undefined;
    if (previous && continued === undefined)
      await endBrowserSessions(trx, ctx, { idHash: hashSecret(previous) }, 'replaced');
    await endBrowserSessions(trx, ctx, { userId, expiredAt: now }, 'expired');
    return insertSession(trx, {
      ...(continued === undefined ? {} : { sid: continued }),
      idHash,
      userId,
      authTime: now,
      amr: [...amr],
      createdAt: now,
      expiresAt: new Date(now.getTime() + config.SESSION_TTL_SECONDS * 1000),
      userAgent: request.headers['user-agent']?.slice(0, USER_AGENT_MAX_LENGTH) ?? null,
      ip: request.ip ?? null,
    });
  });
  const session: BrowserSession = { idHash, sid, userId, authTime: now, amr };
  reply.setCookie(cookieName(SESSION_COOKIE, request), id, cookieOptions(config));
  loaded.set(request, Promise.resolve(session));
  return session;
}

/**
 * Signs the browser out: the session is deleted server-side, each site with a grant in it gets a
 * logout token (queued in the same transaction), and its cookie is cleared.
 */
export async function endSession(request: FastifyRequest, reply: FastifyReply, deps: Deps): Promise<void> {
  const id = presentedSessionId(request);
  if (id) await endBrowserSessions(deps.db, deps.ctx, { idHash: hashSecret(id) }, 'sign_out');
  const { maxAge: _maxAge, ...attributes } = cookieOptions(deps.ctx.config);
  reply.clearCookie(cookieName(SESSION_COOKIE, request), attributes);
  loaded.set(request, Promise.resolve(null));
}
