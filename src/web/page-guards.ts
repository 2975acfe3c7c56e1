import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Deps } from '../context.js';
import { RequestValues } from '../http/request-values.js';
import { verifyCsrfToken } from './csrf.js';
import { PageError } from './pages.js';
import { type BrowserSession, loadSession } from './session.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A form POST: its `csrf_token` must be this browser's (403 `form_expired` page otherwise). */
    csrf?: boolean;
    /** 'required': a signed-in browser; others are sent to sign in and brought back. */
    session?: 'required';
    /** Where the language switch of a page answering this route leads (a POST cannot be repeated by a link). */
    switchBase?: (request: FastifyRequest) => string | undefined;
  }
}

/** Where a browser without a session goes: the sign-in page, then back to the account page. */
export const SIGN_IN_TO_ACCOUNT = '/signin?return_to=/account';

const sessions = new RequestValues<BrowserSession>("the page guard (session: 'required')");

/**
 * Enforces the page routes' declarations, so that no handler repeats them: `csrf` (OWASP's signed
 * double-submit token, checked before anything the form asks for) and `session: 'required'`. The
 * check is added only to the routes that declare one (`onRoute`): the API routes pay nothing.
 */
export function installPageGuards(app: FastifyInstance, deps: Deps): void {
  const guard: preHandlerAsyncHookHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const config = request.routeOptions.config;
    if (config.csrf && !verifyCsrfToken(request, (request.body as { csrf_token?: unknown })?.csrf_token)) {
      // The form did not come from our page (CSRF), or its CSRF cookie expired or was cleared.
      throw new PageError(403, 'form_expired');
    }
    if (config.session === 'required') {
      const session = await loadSession(request, deps);
      if (!session) return reply.redirect(SIGN_IN_TO_ACCOUNT, request.method === 'GET' ? 302 : 303);
      sessions.set(request, session);
    }
  };
  app.addHook('onRoute', (route) => {
    if (!route.config?.csrf && !route.config?.session) return;
    route.preHandler = [guard, ...[route.preHandler ?? []].flat()];
  });
}

/** The session of a route declared `session: 'required'`. */
export function requiredSession(request: FastifyRequest): BrowserSession {
  return sessions.of(request);
}
