import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Deps } from '../context.js';
import type { Database } from '../db/schema.js';
import { hashSecret } from '../lib/secrets.js';
import { renewSessionId } from '../modules/accounts/sessions.repository.js';
import { type BrowserSession, cookieName, cookieOptions, SESSION_COOKIE } from './session.js';

/** A new id for the browser's session, made before the transaction that gives it. */
export interface SessionRotation {
  /**
   * Gives the session its new id on `trx` (the transaction of the change that calls for it);
   * answers whether the session was still there to take it.
   */
  apply(trx: Kysely<Database>): Promise<boolean>;
  /** After the commit: hands the browser the new id as its session cookie, if `apply` took. */
  commit(): void;
}

/**
 * Prepares the rotation of this browser's session id (OWASP Session Management Cheat Sheet:
 * "Renew the Session ID After Any Privilege Level Change", a password change included). The
 * session continues, the same `sid` and all (the sites signed in with it stay signed in); only
 * its cookie value changes, so a copy of the old value signs nobody in. 256 new bits from the
 * CSPRNG; only their SHA-256 is stored, as at sign-in.
 */
export function prepareSessionRotation(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  session: BrowserSession,
): SessionRotation {
  const id = randomBytes(32).toString('base64url');
  const newIdHash = hashSecret(id);
  let rotated = false;
  return {
    async apply(trx) {
      const sid = await renewSessionId(trx, {
        idHash: session.idHash,
        newIdHash,
        now: deps.ctx.clock.now(),
      });
      rotated = sid !== undefined;
      return rotated;
    },
    commit() {
      if (rotated) reply.setCookie(cookieName(SESSION_COOKIE, request), id, cookieOptions(deps.ctx.config));
    },
  };
}
