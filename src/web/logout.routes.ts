import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../context.js';
import { inTransaction } from '../db/transaction.js';
import { ApiError } from '../lib/errors.js';
import { findUserById } from '../modules/accounts/accounts.repository.js';
import { auditRequest } from '../modules/audit/audit.repository.js';
import {
  checkLogoutRequest,
  hintMatchesSession,
  type LogoutRequest,
  openLogoutRequest,
  postLogoutLocation,
  sealLogoutRequest,
} from '../modules/oidc/logout.service.js';
import { linkableSiteUrl } from './account.routes.js';
import { issueCsrfToken } from './csrf.js';
import { localeFromUiLocales } from './i18n/index.js';
import { PageError, preferPageLocale, renderPage } from './pages.js';
import { type BrowserSession, endSession, loadSession } from './session.js';

/** The end_session_endpoint (discovery), and its continuation and confirmation form. */
export const END_SESSION_PATH = '/api/v1/oauth/logout';
const RESUME_PATH = `${END_SESSION_PATH}/resume`;
const CONFIRM_PATH = `${END_SESSION_PATH}/confirm`;

/** What a sealed request looks like (lib/sealed-secret.ts: `v1.<nonce>.<ciphertext>`, base64url). */
const SEALED_SHAPE = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{1,65536}$/;

const resumeUrl = (sealed: string) => `${RESUME_PATH}?request=${encodeURIComponent(sealed)}`;

/** The parameters of a request, or of a form: an object of strings (and arrays, which are refused). */
function parametersOf(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new PageError(400, 'logout_invalid', { detail: 'The parameters must be form-encoded.' });
  }
  return value as Record<string, unknown>;
}

/** A request that does not check out: the error page, never a redirect (RP-Initiated Logout §4). */
function asPage(error: unknown): unknown {
  return error instanceof ApiError && !error.redirectable && !(error instanceof PageError)
    ? new PageError(400, 'logout_invalid', { detail: error.description }, error)
    : error;
}

/**
 * OpenID Connect RP-Initiated Logout 1.0 (docs/oauth.md "Logout"). A hint issued
 * in this very session ends it at once; any other request with a session asks the user first.
 * Both this endpoint and the account page's sign-out end the session through `endSession`.
 */
export const logoutRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  const check = async (request: FastifyRequest, params: unknown): Promise<LogoutRequest> => {
    const values = parametersOf(params);
    // The error page of a refused request is in the site's language too.
    const uiLocales = values.ui_locales;
    if (typeof uiLocales === 'string')
      preferPageLocale(request, localeFromUiLocales(uiLocales.slice(0, 200)));
    try {
      return await checkLogoutRequest(db, ctx, values);
    } catch (error) {
      throw asPage(error);
    }
  };

  const reopen = async (sealed: unknown): Promise<LogoutRequest> => {
    let logout: LogoutRequest | null;
    try {
      logout = await openLogoutRequest(db, ctx, sealed);
    } catch (error) {
      throw asPage(error);
    }
    if (!logout) throw new PageError(400, 'logout_expired');
    return logout;
  };

  /** Ends the session and records it, in one transaction (the audit row and the deletion together). */
  const signOut = (
    request: FastifyRequest,
    reply: FastifyReply,
    logout: LogoutRequest,
    session: BrowserSession,
    confirmed: boolean,
  ) =>
    inTransaction(db, async (trx) => {
      await auditRequest(trx, ctx, request, {
        actor: `user:${session.userId}`,
        action: 'signed_out',
        subject: logout.client ? `client:${logout.client.clientId}` : null,
        details: { via: 'end_session_endpoint', confirmed },
      });
      await endSession(request, reply, { ...deps, db: trx });
    });

  /** After logout (or with nothing to end): back to the site (§3), or the signed-out page. */
  const leave = (reply: FastifyReply, logout: LogoutRequest, status: 302 | 303): FastifyReply => {
    const location = postLogoutLocation(logout);
    if (location) return reply.redirect(location, status);
    const client = logout.client;
    return renderPage(
      reply,
      'signed-out',
      { client: client ? { name: client.name, siteHref: linkableSiteUrl(client.siteUrl) } : null },
      // The language switch shows this page again: with no session, the endpoint shows nothing else.
      {
        switchBase: client
          ? `${END_SESSION_PATH}?client_id=${encodeURIComponent(client.clientId)}`
          : END_SESSION_PATH,
      },
    );
  };

  const confirmationPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    logout: LogoutRequest,
    session: BrowserSession,
  ) => {
    const user = await findUserById(db, session.userId);
    if (!user) throw new Error('the signed-in user no longer exists');
    const sealed = sealLogoutRequest(ctx, logout);
    const client = logout.client;
    return renderPage(
      reply,
      'logout',
      {
        csrfToken: issueCsrfToken(request, reply, ctx),
        request: sealed,
        client: client ? { name: client.name, siteUrl: client.siteUrl } : null,
        username: user.username,
      },
      // Either answer of the form is redirected to the site's post_logout_redirect_uri (CSP form-action).
      {
        switchBase: resumeUrl(sealed),
        formTargets: logout.postLogoutRedirectUri ? [logout.postLogoutRedirectUri] : [],
      },
    );
  };

  /** With a session: ends it when the hint was issued in it, else asks. Without one: nothing to end. */
  const proceed = async (request: FastifyRequest, reply: FastifyReply, logout: LogoutRequest) => {
    preferPageLocale(request, localeFromUiLocales(logout.uiLocales));
    const session = await loadSession(request, deps);
    if (!session) return leave(reply, logout, 302);
    if (logout.hint && hintMatchesSession(logout.hint, session)) {
      await signOut(request, reply, logout, session, false);
      return leave(reply, logout, 302);
    }
    return confirmationPage(request, reply, logout, session);
  };

  app.get(
    END_SESSION_PATH,
    {
      config: {
        auth: 'browser',
        description: 'OpenID Connect end_session_endpoint: RP-initiated logout (opened in the browser)',
      },
    },
    async (request, reply) => proceed(request, reply, await check(request, request.query)),
  );

  app.post(
    END_SESSION_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'OpenID Connect end_session_endpoint, form POST: checks the request, then continues as a GET',
        rateLimit: 'signin',
      },
    },
    async (request, reply) => {
      const logout = await check(request, request.body);
      // A site's form POST is cross-site: the SameSite=Lax session cookie is not sent with it, so
      // the session cannot be seen here. The checked request continues as a top-level GET, which
      // carries the cookie.
      return reply.redirect(resumeUrl(sealLogoutRequest(ctx, logout)), 303);
    },
  );

  app.get(
    RESUME_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Continues a logout request (after its form POST, or to switch the language)',
      },
    },
    async (request, reply) =>
      proceed(request, reply, await reopen((request.query as Record<string, unknown>).request)),
  );

  app.post(
    CONFIRM_PATH,
    {
      config: {
        auth: 'browser',
        description: 'The logout confirmation form: sign out, or stay signed in',
        csrf: true,
        rateLimit: 'signin',
        switchBase: (request) => {
          const sealed = (request.body as Record<string, unknown> | undefined)?.request;
          return typeof sealed === 'string' && SEALED_SHAPE.test(sealed) ? resumeUrl(sealed) : undefined;
        },
      },
    },
    async (request, reply) => {
      const form = parametersOf(request.body);
      const decision = form.decision;
      if (decision !== 'signout' && decision !== 'stay') throw new PageError(400, 'form_incomplete');
      const logout = await reopen(form.request);
      preferPageLocale(request, localeFromUiLocales(logout.uiLocales));
      if (decision === 'stay') {
        // The site asked for logout and has ended its own session: the user goes back to it with
        // this session kept, or, when the site named no return address, to their account.
        return reply.redirect(postLogoutLocation(logout) ?? '/account', 303);
      }
      const session = await loadSession(request, deps);
      if (session) await signOut(request, reply, logout, session, true);
      return leave(reply, logout, 303);
    },
  );
};
