import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../context.js';
import type { ConsoleSessionRecord } from '../../modules/operators/console-access.service.js';
import { liveConsoleSession } from '../../modules/operators/console-access.service.js';
import type { BrowserSession } from '../session.js';

/** The console's paths, and its cookie's: the cookie is sent nowhere else. */
export const CONSOLE_PATH = '/admin';
export const CONSOLE_ENTER_PATH = '/admin/enter';
export const CONSOLE_REAUTH_PATH = '/admin/reauthenticate';

const COOKIE = 'idp_console';
const VALUE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * The console cookie's name. `__Secure-` over https (RFC 6265bis §4.1.3.1): only a secure page can
 * set it. Not `__Host-`, which demands Path=/: the console's cookie is kept to /admin, so the
 * rest of the site never carries it.
 */
function cookieName(request: FastifyRequest): string {
  return request.server.secureCookies ? `__Secure-${COOKIE}` : COOKIE;
}

/** Sets the console cookie: HttpOnly, SameSite=Lax, Path=/admin, as long as the console session. */
export function setConsoleCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  value: string,
): void {
  reply.setCookie(cookieName(request), value, {
    httpOnly: true,
    sameSite: 'lax',
    path: CONSOLE_PATH,
    secure: request.server.secureCookies,
    maxAge: deps.ctx.config.ADMIN_SESSION_TTL_SECONDS,
  });
}

export function clearConsoleCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(cookieName(request), {
    httpOnly: true,
    sameSite: 'lax',
    path: CONSOLE_PATH,
    secure: request.server.secureCookies,
  });
}

/** The live console session of this request, on its account session, or undefined. */
export async function loadConsoleSession(
  request: FastifyRequest,
  deps: Deps,
  account: BrowserSession,
): Promise<ConsoleSessionRecord | undefined> {
  const value = request.cookies[cookieName(request)];
  if (!value || !VALUE_PATTERN.test(value)) return undefined;
  const session = await liveConsoleSession(deps.db, deps.ctx, { value, accountSessionHash: account.idHash });
  return session?.userId === account.userId ? session : undefined;
}
