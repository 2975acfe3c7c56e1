import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../context.js';
import { RequestValues } from '../../http/request-values.js';
import { safeReturnPath } from '../../lib/return-to.js';
import { findUserById } from '../../modules/accounts/accounts.repository.js';
import { pageLocale, renderPage } from '../pages.js';
import type { BrowserSession } from '../session.js';
import { loadSession } from '../session.js';
import { developersTexts } from './i18n/index.js';
import { DEVELOPERS_PATH } from './paths.js';

/** The account a portal request acts for: signed in, its e-mail address confirmed. */
export interface Developer {
  userId: number;
  username: string;
  session: BrowserSession;
}

const developers = new RequestValues<Developer>('the developer portal guard');

/** The account of a portal route (its guard ran first). */
export function requiredDeveloper(request: FastifyRequest): Developer {
  return developers.of(request);
}

/** Where a browser without a session comes back to after signing in: the page, or the form's page. */
function comeBackTo(request: FastifyRequest): string {
  if (request.method === 'GET') return safeReturnPath(request.url) ?? DEVELOPERS_PATH;
  return safeReturnPath(request.routeOptions.config.switchBase?.(request)) ?? DEVELOPERS_PATH;
}

/**
 * The portal's guard, before every route of it: a browser without a session signs in and comes
 * back; an account without a confirmed e-mail address gets a page that says to confirm it (the
 * owners of an application are told of every change by e-mail, and an unconfirmed address may be
 * anyone's). A disabled account has no session (loadSession), so it never gets here.
 */
export function developersGuard(deps: Deps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await loadSession(request, deps);
    const user = session && (await findUserById(deps.db, session.userId));
    if (!session || !user) {
      const to = `/signin?return_to=${encodeURIComponent(comeBackTo(request))}`;
      return reply.redirect(to, request.method === 'GET' ? 302 : 303);
    }
    if (!user.emailVerified) {
      const d = developersTexts(pageLocale(request, reply));
      return renderPage(reply.code(403), 'developers/confirm-email', { title: d.confirmTitle, d });
    }
    developers.set(request, { userId: user.id, username: user.username, session });
  };
}
