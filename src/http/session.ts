import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app.js';

/** A signed-in browser. */
export interface BrowserSession {
  idHash: string;
  userId: number;
  /** When the user last entered their password (OIDC `auth_time`). */
  authTime: Date;
}

/** The browser session of this request, or null (memoized per request). */
export async function loadSession(_request: FastifyRequest, _deps: AppDeps): Promise<BrowserSession | null> {
  return null;
}

/** Starts a session for a user who just signed in (a new id: the old session, if any, is removed). */
export async function startSession(
  _request: FastifyRequest,
  _reply: FastifyReply,
  _deps: AppDeps,
  _userId: number,
): Promise<BrowserSession> {
  throw new Error('sessions are not available yet');
}
