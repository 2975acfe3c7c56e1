import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Deps } from '../context.js';
import { RequestValues } from '../http/request-values.js';
import { ApiError } from '../lib/errors.js';
import { safeReturnPath } from '../lib/return-to.js';
import { verifyCsrfToken } from './csrf.js';
import { flowFrom, flowQueryString } from './page-forms.js';
import { PageError } from './pages.js';
import { type BrowserSession, loadSession, recentlyAuthenticated } from './session.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A form POST: its `csrf_token` must be this browser's (403 `form_expired` page otherwise). */
    csrf?: boolean;
    /** 'required': a signed-in browser; others are sent to sign in and brought back. */
    session?: 'required';
    /**
     * 'required' ("sudo mode"): a session that signed in or re-authenticated within
     * REAUTH_MAX_AGE_SECONDS; others are sent to `/account/reauthenticate` and brought back, and
     * a form posted without it changes nothing. For the routes that change how the account signs in.
     */
    reauth?: 'required';
    /** Where the language switch of a page answering this route leads (a POST cannot be repeated by a link). */
    switchBase?: (request: FastifyRequest) => string | undefined;
  }
}

/** Where a browser without a session goes: the sign-in page, then back to the account page. */
export const SIGN_IN_TO_ACCOUNT = '/signin?return_to=/account';

/** The page where a signed-in person proves again who they are (sudo mode). */
export const REAUTHENTICATE_PATH = '/account/reauthenticate';

/**
 * Where a re-authentication brings the person back: the page itself for a GET; for a form POST
 * (which cannot be repeated by a redirect), the page the form is on, with the form's flow.
 */
function reauthReturnPath(request: FastifyRequest): string {
  if (request.method === 'GET') return safeReturnPath(request.url) ?? '/account';
  const page = request.routeOptions.config.switchBase?.(request) ?? '/account';
  const body = (request.body ?? {}) as { request?: string; return_to?: string };
  return `${page}${flowQueryString(flowFrom({ request: body.request, return_to: body.return_to }))}`;
}

/** The page-script endpoints (JSON bodies) answer in the contract's shape, never with a redirect. */
function isJsonRequest(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').startsWith('application/json');
}

const sessions = new RequestValues<BrowserSession>("the page guard (session: 'required')");

/**
 * Enforces the page routes' declarations, so that no handler repeats them: `csrf` (OWASP's signed
 * double-submit token, checked before anything the form asks for), `session: 'required'` and
 * `reauth: 'required'` (a recent sign-in or re-authentication, checked after both). The
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
    if (config.reauth === 'required') {
      // Without a session the route's own answer stands (the sign-in redirect, or login_required).
      const session = await loadSession(request, deps);
      if (session && !recentlyAuthenticated(session, deps)) {
        const to = `${REAUTHENTICATE_PATH}?return_to=${encodeURIComponent(reauthReturnPath(request))}`;
        if (isJsonRequest(request))
          throw new ApiError(403, 'reauthentication_required', `Confirm it is you first: ${to}`);
        return reply.redirect(to, request.method === 'GET' ? 302 : 303);
      }
    }
  };
  app.addHook('onRoute', (route) => {
    if (!route.config?.csrf && !route.config?.session && !route.config?.reauth) return;
    route.preHandler = [guard, ...[route.preHandler ?? []].flat()];
  });
}

/** The session of a route declared `session: 'required'`. */
export function requiredSession(request: FastifyRequest): BrowserSession {
  return sessions.of(request);
}
