import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../../app.js';
import { issueCsrfToken, verifyCsrfToken } from '../../http/csrf.js';
import { renderErrorPage, renderPage } from '../../http/pages.js';
import { countAuthenticatedClient } from '../../http/rate-limit.js';
import { loadSession } from '../../http/session.js';
import { AccessDenied, ApiError, InvalidRequest } from '../../lib/errors.js';
import { hashSecret } from '../../lib/secrets.js';
import { auditRequest } from '../audit/audit.repository.js';
import {
  type AuthorizationRequest,
  AuthorizeRedirectError,
  checkAuthorizeRequest,
  consentCovers,
  errorRedirect,
  fromPendingRow,
  issueCode,
  pendingStillAllowed,
  savePendingRequest,
  sessionSatisfies,
} from './authorize.service.js';
import { authenticateClient } from './client-auth.js';
import { consumePendingRequest, findClientById, findPendingRequest } from './oauth.repository.js';
import { introspectToken, revokeToken } from './revocation.service.js';
import type { Scope } from './scopes.js';
import { handleTokenRequest } from './tokens.service.js';

/** The pending request's own URL: the language switch of its pages re-renders it from there. */
const resumeUrl = (id: string) => `/api/v1/oauth/authorize/resume?request=${encodeURIComponent(id)}`;

/** No OAuth parameter of ours comes near this; longer ones are refused before any work. */
const MAX_PARAMETER_LENGTH = 4096;

/** An OAuth form body as flat strings; a repeated parameter is refused (RFC 6749 §3.2). */
function formParameters(request: FastifyRequest): Record<string, string | undefined> {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new InvalidRequest(
      'Send the parameters as application/x-www-form-urlencoded (RFC 6749 section 3.2).',
    );
  }
  const body = (request.body ?? {}) as Record<string, unknown>;
  const params: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== 'string')
      throw new InvalidRequest('Each parameter must be sent once (RFC 6749 section 3.2).');
    if (value.length > MAX_PARAMETER_LENGTH || name.length > MAX_PARAMETER_LENGTH)
      throw new InvalidRequest(`A parameter is longer than ${MAX_PARAMETER_LENGTH} characters.`);
    params[name] = value;
  }
  return params;
}

function tokenTypeHintOf(hint: string | undefined): string | null {
  if (hint === undefined) return null;
  return hint === 'access_token' || hint === 'refresh_token' ? hint : 'other';
}

function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/** Authorize, the consent decision, token, revocation and introspection. */
export const oauthRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const issuer = deps.config.PUBLIC_URL;

  /** Renders the page or redirect that an authorize error calls for. */
  const answerAuthorizeError = (reply: FastifyReply, error: unknown): FastifyReply => {
    if (error instanceof AuthorizeRedirectError) return reply.redirect(errorRedirect(error, issuer));
    if (error instanceof ApiError && !error.redirectable) {
      return renderErrorPage(reply, 400, 'invalid_link', { detail: error.description });
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
      reply.redirect(
        errorRedirect(
          new AuthorizeRedirectError(new ApiError(400, error, description), authz.redirectUri, authz.state),
          issuer,
        ),
      );
    const session = await loadSession(request, deps);
    if (!sessionSatisfies(authz, session, pending, deps.clock.now()) || session === null) {
      if (authz.prompt.has('none'))
        return fail('login_required', 'The user is not signed in, or not recently enough for max_age.');
      const id = pending?.id ?? (await savePendingRequest(deps, authz, session?.idHash ?? null));
      return reply.redirect(`/signin?request=${encodeURIComponent(id)}`);
    }

    if (!authz.prompt.has('consent') && (await consentCovers(deps, session.userId, authz))) {
      if (pending && !(await consumePendingRequest(deps.db, hashSecret(pending.id), deps.clock.now()))) {
        return renderErrorPage(reply, 400, 'request_expired');
      }
      const location = await issueCode(deps, authz, {
        userId: session.userId,
        authTime: session.authTime,
        scopes: authz.scopes,
      });
      return reply.redirect(location);
    }
    if (authz.prompt.has('none'))
      return fail('consent_required', 'The user has not allowed this application yet.');

    const id = pending?.id ?? (await savePendingRequest(deps, authz, session.idHash));
    const user = await deps.db
      .selectFrom('users')
      .select('username')
      .where('id', '=', session.userId)
      .executeTakeFirstOrThrow();
    return renderPage(
      reply,
      'consent',
      {
        csrfToken: issueCsrfToken(request, reply, deps),
        requestId: id,
        client: { name: authz.client.name, siteUrl: authz.client.site_url },
        user: { username: user.username },
        scopes: authz.scopes,
        emailRequested: authz.scopes.includes('email'),
        walletRequested: authz.scopes.includes('wallet'),
      },
      // Switching the language shows this request's page again, rather than starting a new one.
      { switchBase: resumeUrl(id) },
    );
  };

  app.get(
    '/api/v1/oauth/authorize',
    { config: { auth: 'browser', description: 'OAuth 2.0 authorization endpoint (opened in the browser)' } },
    async (request, reply) => {
      noStore(reply);
      let authz: AuthorizationRequest;
      try {
        authz = await checkAuthorizeRequest(deps, request.query as Record<string, unknown>);
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
      noStore(reply);
      const id = (request.query as Record<string, unknown>).request;
      const row =
        typeof id === 'string' && id.length <= 100
          ? await findPendingRequest(deps.db, hashSecret(id), deps.clock.now())
          : undefined;
      const client = row ? await findClientById(deps.db, row.client_pk) : undefined;
      const authz = row && client ? fromPendingRow(row, client) : undefined;
      if (!row || !authz || !pendingStillAllowed(authz) || typeof id !== 'string') {
        return renderErrorPage(reply, 400, 'request_expired');
      }
      return proceed(request, reply, authz, { id, staleSessionHash: row.stale_session_hash });
    },
  );

  app.post(
    '/api/v1/oauth/authorize/decision',
    { config: { auth: 'browser', description: 'The consent page form: allow or deny' } },
    async (request, reply) => {
      noStore(reply);
      const form = (request.body ?? {}) as Record<string, unknown>;
      const id = form.request;
      // The language switch of an error page here leads back to the request's consent page.
      const switchBase = typeof id === 'string' && id.length <= 100 ? resumeUrl(id) : undefined;
      if (!verifyCsrfToken(request, form.csrf_token)) {
        return renderErrorPage(reply, 403, 'form_expired', { switchBase });
      }
      const decision = form.decision;
      if (typeof id !== 'string' || id.length > 100 || (decision !== 'allow' && decision !== 'deny')) {
        return renderErrorPage(reply, 400, 'form_incomplete', { switchBase });
      }
      const now = deps.clock.now();
      const pending = await findPendingRequest(deps.db, hashSecret(id), now);
      const client = pending ? await findClientById(deps.db, pending.client_pk) : undefined;
      if (!pending || !client || !pendingStillAllowed(fromPendingRow(pending, client))) {
        return renderErrorPage(reply, 400, 'request_expired', { switchBase });
      }
      // Every condition of the authorize step holds here too: a decision posted straight after a
      // prompt=login or max_age redirect, with the old session, goes to the sign-in page instead.
      const session = await loadSession(request, deps);
      const satisfied = sessionSatisfies(
        fromPendingRow(pending, client),
        session,
        {
          staleSessionHash: pending.stale_session_hash,
        },
        now,
      );
      if (!session || !satisfied) return reply.redirect(`/signin?request=${encodeURIComponent(id)}`, 303);
      // The decision uses this one request up: a consent cannot approve another request, nor this one twice.
      const row = await consumePendingRequest(deps.db, hashSecret(id), now);
      if (!row) return renderErrorPage(reply, 400, 'request_expired', { switchBase });
      const authz = fromPendingRow(row, client);
      await auditRequest(deps, request, {
        actor: `user:${session.userId}`,
        action: decision === 'deny' ? 'consent_denied' : 'consent_allowed',
        subject: `client:${client.client_id}`,
        details: { scopes: authz.scopes, email_shared: form.share_email === '1' },
      });
      if (decision === 'deny') {
        const denied = new AuthorizeRedirectError(
          new AccessDenied('The user denied access.'),
          authz.redirectUri,
          authz.state,
        );
        return reply.redirect(errorRedirect(denied, issuer), 303);
      }
      // CONTRACT.md §5: unchecking the e-mail box drops `email` from the grant.
      const withheld: Scope[] =
        form.share_email === '1' ? [] : authz.scopes.filter((scope) => scope === 'email');
      const location = await issueCode(deps, authz, {
        userId: session.userId,
        authTime: session.authTime,
        scopes: authz.scopes.filter((scope) => !withheld.includes(scope)),
        remember: { withheld },
      });
      return reply.redirect(location, 303);
    },
  );

  app.post(
    '/api/v1/oauth/token',
    {
      config: {
        revokes: 'refused',
        auth: 'client',
        description: 'OAuth 2.0 token endpoint (authorization_code, refresh_token)',
      },
    },
    async (request, reply) => {
      noStore(reply);
      const params = formParameters(request);
      const client = await authenticateClient(request, params, deps);
      countAuthenticatedClient(request, client.client_id);
      return handleTokenRequest(deps, client, params);
    },
  );

  app.post(
    '/api/v1/oauth/revoke',
    { config: { revokes: true, auth: 'client', description: 'Token revocation (RFC 7009)' } },
    async (request, reply) => {
      noStore(reply);
      const params = formParameters(request);
      const client = await authenticateClient(request, params, deps);
      countAuthenticatedClient(request, client.client_id);
      await revokeToken(deps, client, params);
      // RFC 7009 answers 200 whether or not the token was known; the log says only that it was asked.
      await auditRequest(deps, request, {
        actor: `client:${client.client_id}`,
        action: 'token_revoked',
        // RFC 7009 §2.1 defines two hints; anything else is kept only as "other".
        details: { token_type_hint: tokenTypeHintOf(params.token_type_hint) },
      });
      return { ok: true };
    },
  );

  app.post(
    '/api/v1/oauth/introspect',
    { config: { auth: 'client', description: 'Token introspection (RFC 7662)' } },
    async (request, reply) => {
      noStore(reply);
      const params = formParameters(request);
      const client = await authenticateClient(request, params, deps);
      countAuthenticatedClient(request, client.client_id);
      return introspectToken(deps, client, params);
    },
  );
};
