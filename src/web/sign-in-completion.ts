import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../context.js';
import type { AuthenticationMethod } from '../lib/amr.js';
import { rememberBrowser } from './device-cookie.js';
import { destination, type Flow } from './page-forms.js';
import { startSession } from './session.js';

/** Who signed in, how (RFC 8176 `amr`), and where they were going. */
export interface SignInOutcome {
  userId: number;
  amr: readonly AuthenticationMethod[];
  flow: Flow;
}

/**
 * A new session recording the methods used (RFC 8176 `amr`) and a new `auth_time`, and this browser
 * remembered as one the account signs in from: the end of every full sign-in (the password, with
 * its second step when the account has one, or a passkey). A factor passed or enrolled on a session
 * that is already signed in upgrades it instead (`upgradeSession`): no new sign-in happened.
 */
export async function startSignedInSession(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  sign: { userId: number; amr: readonly AuthenticationMethod[] },
): Promise<void> {
  await startSession(request, reply, deps, sign.userId, sign.amr);
  rememberBrowser(request, reply, deps.ctx, sign.userId);
}

/**
 * The end of every sign-in, however it went (a password alone, a password and a second factor, a
 * passkey): the new session (startSignedInSession). Returns where the person was going; a form
 * answers with a redirect there (completeSignIn), a page script with it in JSON.
 */
export async function signInBrowser(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  sign: SignInOutcome,
): Promise<string> {
  await startSignedInSession(request, reply, deps, sign);
  return destination(sign.flow);
}

/** signInBrowser, then the 303 to where the person was going (a form's answer). */
export async function completeSignIn(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  sign: SignInOutcome,
): Promise<FastifyReply> {
  return reply.redirect(await signInBrowser(request, reply, deps, sign), 303);
}
