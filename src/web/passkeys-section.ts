import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../context.js';
import { CEREMONY_TTL_MS } from '../modules/passkeys/ceremony.js';
import { listPasskeys } from '../modules/passkeys/passkeys.repository.js';
import { passkeyScriptHrefs } from './assets/passkey-scripts.js';
import { cookieName, cookieOptions } from './session.js';

/** Where the passkeys' forms and ceremonies are posted; a GET leads to the security page's section. */
export const PASSKEYS_PAGE = '/account/passkeys';

/** One row of the section: what the user sees of a passkey (never its key). */
export interface PasskeyItem {
  id: number;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  backedUp: boolean;
}

/** What views/security-passkeys.ejs shows: the list and the scripts its "Add a passkey" button needs. */
export interface PasskeySection {
  items: PasskeyItem[];
  scripts: string[];
}

/**
 * The data of the passkeys section of the security page (views/security-passkeys.ejs, included as
 * `include('security-passkeys', { passkeys })`; it also reads the page's `csrfToken`).
 */
export async function passkeySectionData(deps: Deps, userId: number): Promise<PasskeySection> {
  const passkeys = await listPasskeys(deps.db, userId);
  return {
    items: passkeys.map((passkey) => ({
      id: passkey.id,
      name: passkey.name,
      createdAt: passkey.createdAt,
      lastUsedAt: passkey.lastUsedAt,
      backedUp: passkey.backedUp,
    })),
    scripts: passkeyScriptHrefs(),
  };
}

/**
 * What the passkey sign-in buttons (views/signin.ejs, views/second-factor-passkey.ejs) need
 * besides the page's `csrfToken`, `requestId` and `returnTo`: the scripts.
 */
export function passkeySignInData(): { scripts: string[] } {
  return { scripts: passkeyScriptHrefs() };
}

/** The cookie naming the WebAuthn ceremony this browser started. */
const CEREMONY_COOKIE = 'idp_webauthn';

/**
 * Binds a ceremony to this browser: its id in an HttpOnly cookie (as the session's attributes,
 * SameSite=Lax, Secure on https) that lives as long as the ceremony may.
 */
export function setCeremonyCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  id: string,
): void {
  reply.setCookie(cookieName(CEREMONY_COOKIE, request), id, {
    ...cookieOptions(deps.ctx.config),
    maxAge: CEREMONY_TTL_MS / 1000,
  });
}

/** The ceremony id this browser holds, if it has the shape of one (taking it is the service's work). */
export function ceremonyCookie(request: FastifyRequest): string | undefined {
  const value = request.cookies[cookieName(CEREMONY_COOKIE, request)];
  return value && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}

/** The ceremony is over, whatever its outcome: its cookie goes. */
export function clearCeremonyCookie(request: FastifyRequest, reply: FastifyReply, deps: Deps): void {
  const { maxAge: _maxAge, ...attributes } = cookieOptions(deps.ctx.config);
  reply.clearCookie(cookieName(CEREMONY_COOKIE, request), attributes);
}
