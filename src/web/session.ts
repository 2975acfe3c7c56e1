import { randomBytes } from 'node:crypto';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Deps } from '../context.js';
import { noteRequestLog } from '../http/request-log.js';
import { type AuthenticationMethod, PASSWORD_ONLY, withMethods } from '../lib/amr.js';
import { hashSecret } from '../lib/secrets.js';
import { endBrowserSessions } from '../modules/accounts/session-end.service.js';
import {
  findActiveSession,
  insertSession,
  setSessionMethods,
  setSessionReauthenticated,
  takeLiveSessionOf,
} from '../modules/accounts/sessions.repository.js';

/** A signed-in browser. */
export interface BrowserSession {
  idHash: string;
  /** The public session id: the `sid` of id_tokens and logout tokens (Back-Channel Logout 1.0 §2.4). */
  sid: string;
  userId: number;
  /** When the user last signed in with the password or a passkey (OIDC `auth_time`). */
  authTime: Date;
  /** How the user signed in, and the factors passed on the session since (RFC 8176). */
  amr: readonly string[];
  /** The last re-authentication on this session without a new sign-in ("sudo mode"), or null. */
  reauthenticatedAt: Date | null;
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
  return {
    idHash: row.idHash,
    sid: row.sid,
    userId: row.userId,
    authTime: row.authTime,
    amr: row.amr,
    reauthenticatedAt: row.reauthenticatedAt,
  };
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
  const session: BrowserSession = { idHash, sid, userId, authTime: now, amr, reauthenticatedAt: null };
  reply.setCookie(cookieName(SESSION_COOKIE, request), id, cookieOptions(config));
  loaded.set(request, Promise.resolve(session));
  return session;
}

/**
 * Adds the methods of a factor just passed or enrolled on a signed-in session (a site's
 * `acr_values=mfa` step-up) to its `amr`, keeping the ones it really used: a code entered on a
 * session never makes it claim a password it did not see.
 *
 * The session keeps its id and its `auth_time`. This is not a sign-in, and both facts must stay
 * true: `auth_time` is when the password or a passkey was last given (OIDC Core §2), and
 * `sessionSatisfies` (prompt=login, max_age) reads "signed in since the request" as "a session id
 * other than the one present at the request"; a rotated id would tell it a sign-in happened that
 * did not. Rotating is what defeats session fixation (OWASP Session Management), and it already
 * happened at the sign-in that made this id; a planted id could only ever be upgraded with a factor
 * of the account it already belongs to, so keeping it gives an attacker nothing. A copied cookie is
 * the risk sudo mode answers: what changes the factors needs a fresh proof (`reauth: 'required'`).
 */
export async function upgradeSession(
  request: FastifyRequest,
  deps: Deps,
  session: BrowserSession,
  added: readonly AuthenticationMethod[],
): Promise<BrowserSession> {
  const amr = withMethods(session.amr, added);
  await setSessionMethods(deps.db, { idHash: session.idHash, amr, now: deps.ctx.clock.now() });
  const upgraded: BrowserSession = { ...session, amr };
  loaded.set(request, Promise.resolve(upgraded));
  return upgraded;
}

/**
 * Records that the person at this session just proved again who they are (the password or a code
 * at `/account/reauthenticate`): the guarded pages open for REAUTH_MAX_AGE_SECONDS. Neither the
 * session's id nor its `auth_time` nor its `amr` changes: it is no sign-in (see `upgradeSession`).
 */
export async function recordReauthentication(
  request: FastifyRequest,
  deps: Deps,
  session: BrowserSession,
): Promise<void> {
  const at = deps.ctx.clock.now();
  await setSessionReauthenticated(deps.db, { idHash: session.idHash, at });
  loaded.set(request, Promise.resolve({ ...session, reauthenticatedAt: at }));
}

/**
 * Whether the session proved its person recently enough to change how the account signs in
 * ("sudo mode"): a full sign-in (`auth_time`) or a re-authentication at most REAUTH_MAX_AGE_SECONDS
 * ago. The one rule the `reauth: 'required'` guard and the pages ask.
 */
export function recentlyAuthenticated(session: BrowserSession, deps: Deps): boolean {
  const last = Math.max(session.authTime.getTime(), session.reauthenticatedAt?.getTime() ?? 0);
  const age = deps.ctx.clock.now().getTime() - last;
  return age <= deps.ctx.config.REAUTH_MAX_AGE_SECONDS * 1000;
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
