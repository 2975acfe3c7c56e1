import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../context.js';
import { noteErrorAnswer } from '../http/request-log.js';
import { AccessDenied, ApiError } from '../lib/errors.js';
import { findUserById } from '../modules/accounts/accounts.repository.js';
import { auditRequest } from '../modules/audit/audit.repository.js';
import { installRefusalLog, noteClientRequest } from '../modules/client-activity/refusal-hook.js';
import { checkAuthorizeRequest, UnregisteredRedirectUri } from '../modules/oauth/authorize/checks.js';
import { consentCovers, issueCode } from '../modules/oauth/authorize/code.service.js';
import { errorRedirect } from '../modules/oauth/authorize/error-redirect.js';
import {
  isPendingRequestId,
  needsSecondFactor,
  restorePendingRequest,
  savePendingRequest,
  sessionSatisfies,
  usePendingRequest,
} from '../modules/oauth/authorize/pending.service.js';
import {
  isPushedRequestUri,
  type PushedRequestOutcome,
  usePushedRequest,
} from '../modules/oauth/authorize/pushed.service.js';
import { type AuthorizationRequest, AuthorizeRedirectError } from '../modules/oauth/authorize/request.js';
import type { Scope } from '../modules/oauth/scopes.js';
import { rollups } from '../modules/rollups/rollup-recorder.js';
import { refuseUnreviewedApp } from './app-review.js';
import { issueCsrfToken } from './csrf.js';
import { redirectUriMismatch } from './error-pages.js';
import { PageError, renderPage } from './pages.js';
import { appFormTargets, appImageOrigins, appOf } from './requesting-app.js';
import { loadSession } from './session.js';

/** The second step of sign-in for a pending request (or the enrolment of a first factor). */
const secondFactorUrl = (id: string) => `/signin/second-factor?request=${encodeURIComponent(id)}`;

/** The pending request's own URL: the language switch of its pages re-renders it from there. */
const resumeUrl = (id: string) => `/api/v1/oauth/authorize/resume?request=${encodeURIComponent(id)}`;

/** The error page's detail for a request_uri that names no pushed request this client may use. */
const UNUSABLE_REQUEST_URI =
  "The request_uri is unknown, expired, already used or not this client_id's; push the request again.";

/** A stored request's client, for its owners' log of refusals after the user signed in. */
function noteRestoredRequest(request: FastifyRequest, authz: AuthorizationRequest): void {
  noteClientRequest(request, 'authorize', authz.client.clientId, {
    redirect_uri: authz.redirectUri,
    scope: authz.scopes.join(' '),
  });
}

function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/** The authorization endpoint and what follows it in the browser: sign-in, the consent page, the decision. */
export const authorizeRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const issuer = ctx.config.PUBLIC_URL;
  app.addHook('onRequest', async (_request, reply) => noStore(reply));
  // A refused request of a known client goes into its owners' log once answered.
  installRefusalLog(app, deps);

  /**
   * The error response as a redirect to the client (RFC 6749 §4.1.2.1); the request's log line
   * says which error, as it would for an error page.
   */
  const redirectWithError = (reply: FastifyReply, error: AuthorizeRedirectError, status?: 303) => {
    noteErrorAnswer(reply.request, error.apiError);
    const location = errorRedirect(error, issuer);
    return status ? reply.redirect(location, status) : reply.redirect(location);
  };

  /** Renders the page or redirect that an authorize error calls for. */
  const answerAuthorizeError = (reply: FastifyReply, error: unknown): FastifyReply => {
    if (error instanceof AuthorizeRedirectError) return redirectWithError(reply, error);
    if (error instanceof ApiError && !error.redirectable) {
      // The developer sees the redirect_uri sent beside where the registered ones are.
      const redirectUri =
        error instanceof UnregisteredRedirectUri
          ? redirectUriMismatch(error.received, error.registered)
          : undefined;
      throw new PageError(400, 'invalid_link', { detail: error.description, redirectUri }, error);
    }
    throw error;
  };

  /**
   * After the checks: sign-in when needed, then remembered consent or the consent page, then a code.
   * `pending` is set when the request was stored (the user came back from signing in).
   */
  const proceed = async (
    request: FastifyRequest,
    reply: FastifyReply,
    authz: AuthorizationRequest,
    pending: { id: string; staleSessionHash: string | null } | null,
  ): Promise<FastifyReply> => {
    const fail = (error: string, description: string) =>
      redirectWithError(
        reply,
        new AuthorizeRedirectError(new ApiError(400, error, description), authz.redirectUri, authz.state),
      );
    const session = await loadSession(request, deps);
    if (!sessionSatisfies(authz, session, pending, deps.ctx.clock.now()) || session === null) {
      if (authz.prompt.has('none'))
        return fail('login_required', 'The user is not signed in, or not recently enough for max_age.');
      const id = pending?.id ?? (await savePendingRequest(db, ctx, authz, session?.idHash ?? null));
      return reply.redirect(`/signin?request=${encodeURIComponent(id)}`);
    }
    if (needsSecondFactor(authz, session)) {
      if (authz.prompt.has('none'))
        return fail('login_required', 'The request needs a second factor the user has not used.');
      // The second step, or the enrolment of a factor, then back to this request.
      const id = pending?.id ?? (await savePendingRequest(db, ctx, authz, session.idHash));
      return reply.redirect(secondFactorUrl(id));
    }
    await refuseUnreviewedApp(deps, authz.client, session.userId);

    if (!authz.prompt.has('consent') && (await consentCovers(db, session.userId, authz))) {
      if (pending && !(await usePendingRequest(db, ctx, pending.id, authz.client))) {
        throw new PageError(400, 'request_expired');
      }
      const location = await issueCode(db, ctx, authz, {
        userId: session.userId,
        authTime: session.authTime,
        amr: session.amr,
        sid: session.sid,
        scopes: authz.scopes,
      });
      rollups.code(authz.client.clientId);
      return reply.redirect(location);
    }
    if (authz.prompt.has('none'))
      return fail('consent_required', 'The user has not allowed this application yet.');

    const id = pending?.id ?? (await savePendingRequest(db, ctx, authz, session.idHash));
    const user = await findUserById(db, session.userId);
    if (!user) throw new Error('the signed-in user no longer exists');
    const app = appOf(authz.client, authz.redirectUri);
    return renderPage(
      reply,
      'consent',
      {
        csrfToken: issueCsrfToken(request, reply, deps.ctx),
        requestId: id,
        client: { name: authz.client.name, siteUrl: authz.client.siteUrl, logo: app.logo?.src ?? null },
        user: { username: user.username },
        scopes: authz.scopes,
        emailRequested: authz.scopes.includes('email'),
        walletRequested: authz.scopes.includes('wallet'),
        notReviewed: authz.client.approvedAt === null,
      },
      // Switching the language shows this request's page again, rather than starting a new one.
      // The app's logo host is admitted to this page's img-src, and its redirect_uri (where the
      // decision's 303 goes) to its form-action, and only to this page's.
      { switchBase: resumeUrl(id), imageOrigins: appImageOrigins(app), formTargets: appFormTargets(app) },
    );
  };

  /**
   * A pushed request (RFC 9126 §4): taken once, with the session present now as the one to
   * outdate for prompt=login and max_age, as when a request from the query is stored.
   */
  const proceedPushed = async (
    request: FastifyRequest,
    reply: FastifyReply,
    query: Record<string, unknown>,
  ): Promise<FastifyReply> => {
    const session = await loadSession(request, deps);
    const staleSessionHash = session?.idHash ?? null;
    let outcome: PushedRequestOutcome | undefined;
    try {
      outcome = await usePushedRequest(db, ctx, query, staleSessionHash);
      // The client is known (usePushedRequest checked it): its refusals from here on are logged.
      noteClientRequest(request, 'authorize', query.client_id as string, query);
    } catch (error) {
      return answerAuthorizeError(reply, error);
    }
    // Unknown, expired, used or another client's: no checked redirect_uri to answer at, so a page
    // (RFC 6749 §4.1.2.1).
    if (!outcome) throw new PageError(400, 'request_expired', { detail: UNUSABLE_REQUEST_URI });
    if ('error' in outcome) return answerAuthorizeError(reply, outcome.error);
    return proceed(request, reply, outcome.request, { id: outcome.pendingId, staleSessionHash });
  };

  app.get(
    '/api/v1/oauth/authorize',
    { config: { auth: 'browser', description: 'OAuth 2.0 authorization endpoint (opened in the browser)' } },
    async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      if (isPushedRequestUri(query.request_uri)) return proceedPushed(request, reply, query);
      let authz: AuthorizationRequest;
      try {
        authz = await checkAuthorizeRequest(db, query, (client) =>
          noteClientRequest(request, 'authorize', client.clientId, query),
        );
      } catch (error) {
        return answerAuthorizeError(reply, error);
      }
      return proceed(request, reply, authz, null);
    },
  );

  app.get(
    '/api/v1/oauth/authorize/resume',
    { config: { auth: 'browser', description: 'Continues an authorization request after sign-in' } },
    async (request, reply) => {
      const id = (request.query as Record<string, unknown>).request;
      const restored = await restorePendingRequest(db, ctx, id);
      if (!restored || !isPendingRequestId(id)) throw new PageError(400, 'request_expired');
      noteRestoredRequest(request, restored.request);
      return proceed(request, reply, restored.request, { id, staleSessionHash: restored.staleSessionHash });
    },
  );

  app.post(
    '/api/v1/oauth/authorize/decision',
    {
      config: {
        auth: 'browser',
        description: 'The consent page form: allow or deny',
        csrf: true,
        rateLimit: 'signin',
        // The language switch of an error page here leads back to the request's consent page.
        switchBase: (request) => {
          const id = (request.body as Record<string, unknown> | undefined)?.request;
          return isPendingRequestId(id) ? resumeUrl(id) : undefined;
        },
      },
    },
    async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, unknown>;
      const id = form.request;
      const decision = form.decision;
      if (!isPendingRequestId(id) || (decision !== 'allow' && decision !== 'deny')) {
        throw new PageError(400, 'form_incomplete');
      }
      const restored = await restorePendingRequest(db, ctx, id);
      if (!restored) throw new PageError(400, 'request_expired');
      noteRestoredRequest(request, restored.request);
      const { client } = restored.request;
      // Every condition of the authorize step holds here too: a decision posted straight after a
      // prompt=login or max_age redirect, with the old session, goes to the sign-in page instead.
      const session = await loadSession(request, deps);
      if (!session || !sessionSatisfies(restored.request, session, restored, ctx.clock.now())) {
        return reply.redirect(`/signin?request=${encodeURIComponent(id)}`, 303);
      }
      if (needsSecondFactor(restored.request, session)) return reply.redirect(secondFactorUrl(id), 303);
      await refuseUnreviewedApp(deps, client, session.userId);
      const authz = await usePendingRequest(db, ctx, id, client);
      if (!authz) throw new PageError(400, 'request_expired');
      await auditRequest(deps.db, deps.ctx, request, {
        actor: `user:${session.userId}`,
        action: decision === 'deny' ? 'consent_denied' : 'consent_allowed',
        subject: `client:${client.clientId}`,
        details: { scopes: authz.scopes, email_shared: form.share_email === '1' },
      });
      if (decision === 'deny') {
        const denied = new AuthorizeRedirectError(
          new AccessDenied('The user denied access.'),
          authz.redirectUri,
          authz.state,
        );
        return redirectWithError(reply, denied, 303);
      }
      // docs/oauth.md: unchecking the e-mail box drops `email` from the grant.
      const withheld: Scope[] =
        form.share_email === '1' ? [] : authz.scopes.filter((scope) => scope === 'email');
      const location = await issueCode(db, ctx, authz, {
        userId: session.userId,
        authTime: session.authTime,
        amr: session.amr,
        sid: session.sid,
        scopes: authz.scopes.filter((scope) => !withheld.includes(scope)),
        remember: { withheld },
      });
      rollups.code(authz.client.clientId);
      return reply.redirect(location, 303);
    },
  );
};
