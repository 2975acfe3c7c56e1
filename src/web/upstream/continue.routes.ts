import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../context.js';
import { isMultiFactor } from '../../lib/amr.js';
import { findUserById } from '../../modules/accounts/accounts.repository.js';
import { hasSecondFactor } from '../../modules/sign-in-policy/sign-in-policy.service.js';
import {
  createAccountFromPending,
  linkPendingToAccount,
  type PendingView,
  pendingIdentityOf,
} from '../../modules/upstream/pending-identity.service.js';
import { issueCsrfToken } from '../csrf.js';
import { destination, echo, flowFrom, formBody, text } from '../page-forms.js';
import { requiredSession } from '../page-guards.js';
import { pageLocale, renderPage } from '../pages.js';
import { loadSession } from '../session.js';
import { startSignedInSession } from '../sign-in-completion.js';
import { clearPendingIdentityCookie, presentedPendingIdentity } from './upstream-cookies.js';
import { renderUpstreamProblem } from './upstream-problem.js';

const CONTINUE_PATH = '/signin/providers/continue';
const LINK_PATH = '/signin/providers/link';
const createBody = formBody({ csrf_token: text, username: text });
const linkBody = formBody({ csrf_token: text });

type UsernameProblem = 'username_format' | 'username_reserved' | 'username_taken';

function renderContinue(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  view: PendingView,
  page: { username?: string; problem?: UsernameProblem } = {},
): FastifyReply {
  const { identity, provider } = view;
  return renderPage(reply.code(page.problem ? 400 : 200), 'upstream-continue', {
    csrfToken: issueCsrfToken(request, reply, deps.ctx),
    provider: provider.displayName,
    who: identity.label ?? identity.email ?? identity.subject,
    email: identity.emailVerified ? identity.email : null,
    emailUnverified: identity.email !== null && !identity.emailVerified,
    username: echo(page.username ?? view.suggestedUsername),
    problem: page.problem,
    linkHref: LINK_PATH,
  });
}

/** The identity this browser brought back from a provider, or the page that says it is gone. */
async function pendingOrStale(request: FastifyRequest, reply: FastifyReply, deps: Deps) {
  const token = presentedPendingIdentity(request);
  const view = token ? await pendingIdentityOf(deps.db, deps.ctx, token) : undefined;
  if (token && view) return { token, view };
  clearPendingIdentityCookie(request, reply, deps.ctx);
  renderUpstreamProblem(request, reply, { problem: 'stale', provider: null });
  return null;
}

/**
 * After a first sign-in through a provider whose subject no account holds: a new account (a
 * username chosen here), or a link to an account of one's own, made only once that account is
 * signed in to (its password or passkey and its second factor, at most REAUTH_MAX_AGE_SECONDS
 * ago: `reauth: 'required'`). Never by the address alone (docs/pages.md).
 */
export const upstreamContinueRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    CONTINUE_PATH,
    {
      config: {
        auth: 'browser',
        description: 'After a first sign-in through a provider: choose a username, or link',
      },
    },
    async (request, reply) => {
      const pending = await pendingOrStale(request, reply, deps);
      return pending ? renderContinue(request, reply, deps, pending.view) : reply;
    },
  );

  routes.post(
    CONTINUE_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Create an account for the identity a provider proved (form POST, CSRF token)',
        csrf: true,
        rateLimit: 'signin',
        costly: true,
        switchBase: () => CONTINUE_PATH,
      },
      schema: { body: createBody },
    },
    async (request, reply) => {
      const pending = await pendingOrStale(request, reply, deps);
      if (!pending) return reply;
      const username = request.body.username ?? '';
      const result = await createAccountFromPending(db, ctx, {
        token: pending.token,
        username,
        ip: request.ip,
      });
      if (!result.ok) {
        if (result.problem === 'expired')
          return renderUpstreamProblem(request, reply, { problem: 'stale', provider: null });
        return renderContinue(request, reply, deps, pending.view, { username, problem: result.problem });
      }
      clearPendingIdentityCookie(request, reply, ctx);
      await startSignedInSession(request, reply, deps, { userId: result.userId, amr: result.amr });
      const flow = flowFrom({ request: result.flow.requestId, return_to: result.flow.returnTo });
      return reply.redirect(destination(flow), 303);
    },
  );

  routes.get(
    LINK_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Link the identity a provider proved to the signed-in account (confirmation)',
      },
    },
    async (request, reply) => {
      const pending = await pendingOrStale(request, reply, deps);
      if (!pending) return reply;
      const session = await loadSession(request, deps);
      // Signed in first, the usual way, then back here.
      if (!session) return reply.redirect(`/signin?return_to=${encodeURIComponent(LINK_PATH)}`, 302);
      const user = await findUserById(db, session.userId);
      if (!user) return reply.redirect(`/signin?return_to=${encodeURIComponent(LINK_PATH)}`, 302);
      return renderPage(reply, 'upstream-link', {
        csrfToken: issueCsrfToken(request, reply, ctx),
        provider: pending.view.provider.displayName,
        who: pending.view.identity.label ?? pending.view.identity.email ?? pending.view.identity.subject,
        username: user.username,
      });
    },
  );

  routes.post(
    LINK_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Link the identity a provider proved to the signed-in account (form POST, recent sign-in)',
        csrf: true,
        rateLimit: 'signin',
        session: 'required',
        reauth: 'required',
        switchBase: () => LINK_PATH,
      },
      schema: { body: linkBody },
    },
    async (request, reply) => {
      const pending = await pendingOrStale(request, reply, deps);
      if (!pending) return reply;
      const session = requiredSession(request);
      // The account's proof includes its second factor: a session that never passed it (one from
      // before the factor was added) passes it now, and comes back.
      if (!isMultiFactor(session.amr) && (await hasSecondFactor(db, session.userId)))
        return reply.redirect(`/signin/second-factor?return_to=${encodeURIComponent(LINK_PATH)}`, 303);
      const result = await linkPendingToAccount(db, ctx, {
        token: pending.token,
        userId: session.userId,
        ip: request.ip,
        locale: pageLocale(request),
      });
      clearPendingIdentityCookie(request, reply, ctx);
      if (!result.ok)
        return renderUpstreamProblem(request, reply, {
          problem: result.problem === 'taken' ? 'taken' : 'stale',
          provider: pending.view.provider.displayName,
        });
      const flow = flowFrom({ request: result.flow.requestId, return_to: result.flow.returnTo });
      return reply.redirect(
        flow.requestId ? destination(flow) : '/account/security?providers=linked#providers',
        303,
      );
    },
  );
};
