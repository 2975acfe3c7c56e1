import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../context.js';
import type { AuthenticationMethod } from '../lib/amr.js';
import { rememberBrowser } from './device-cookie.js';
import { destination, type Flow } from './page-forms.js';
import { startSession } from './session.js';

/**
 * A new session recording the methods used (RFC 8176 `amr`), and this browser remembered as one the
 * account signs in from: the end of every sign-in, and the upgrade of a session whose user just
 * added a second factor (a page that answers itself, such as the recovery codes shown once).
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
 * passkey): the new session (startSignedInSession) and the way on to where the person was going.
 */
export async function completeSignIn(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  sign: { userId: number; amr: readonly AuthenticationMethod[]; flow: Flow },
): Promise<FastifyReply> {
  await startSignedInSession(request, reply, deps, sign);
  return reply.redirect(destination(sign.flow), 303);
}
