import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { NotFound } from '../../lib/errors.js';
import { auditRequest } from '../../modules/audit/audit.repository.js';
import { startPendingSignIn } from '../../modules/mfa/second-factor.service.js';
import { UpstreamFailure } from '../../modules/upstream/upstream-identity.js';
import {
  enabledProvider,
  finishUpstream,
  startUpstream,
  type TripFlow,
  type UpstreamOutcome,
} from '../../modules/upstream/upstream-sign-in.service.js';
import { flowFields, flowFrom, flowQueryString, formBody, text } from '../page-forms.js';
import { pageLocale } from '../pages.js';
import { setPendingSignInCookie } from '../pending-sign-in-cookie.js';
import { loadSession, recordReauthentication } from '../session.js';
import { completeSignIn } from '../sign-in-completion.js';
import {
  clearTripCookie,
  openAppleUser,
  presentedTrip,
  sealAppleUser,
  setPendingIdentityCookie,
  setTripCookie,
} from './upstream-cookies.js';
import { renderUpstreamProblem } from './upstream-problem.js';

/** A provider's name in a path (providers.service's rule); anything else is no provider. */
const providerParams = z.object({ name: z.string().regex(/^[a-z][a-z0-9-]{1,31}$/) });
const startBody = formBody({ ...flowFields, csrf_token: text });
/** What a provider may send back (RFC 6749 §4.1.2, RFC 9207 `iss`, Apple's `user`); the rest is ignored. */
const answerFields = {
  code: text,
  state: text,
  error: text,
  error_description: text,
  iss: text,
  user: text,
};
const callbackQuery = z.object(answerFields);
const callbackBody = formBody(answerFields);

/** A link's trip: "Try again" leads back to the account's section. */
const LINK_TRIP = { purpose: 'link', flow: {} } as const;

/**
 * Starts a trip: the trip's checks sealed in this browser, then the provider. A provider that
 * cannot be reached (discovery failed) is said at once, on the page.
 */
export async function goToProvider(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  trip: { provider: string; purpose: 'sign_in' | 'link' | 'reauth'; userId?: number; flow: TripFlow },
): Promise<FastifyReply> {
  try {
    const { url, checks } = await startUpstream(deps.db, deps.ctx, trip);
    setTripCookie(request, reply, deps.ctx, checks);
    return reply.redirect(url, 303);
  } catch (error) {
    const kind = { purpose: trip.purpose, flow: trip.flow };
    if (error instanceof NotFound)
      return renderUpstreamProblem(request, reply, { problem: 'unknown', provider: null, trip: kind });
    if (!(error instanceof UpstreamFailure)) throw error;
    request.log.warn(
      { provider: trip.provider, reason: error.reason, detail: error.detail },
      'upstream provider failed',
    );
    const provider = await enabledProvider(deps.db, trip.provider).catch(() => undefined);
    return renderUpstreamProblem(request, reply, {
      problem: error.reason,
      provider: provider?.displayName ?? trip.provider,
      trip: kind,
    });
  }
}

/** What the browser sees once the provider answered, by how it ended. */
async function answer(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  outcome: UpstreamOutcome,
): Promise<FastifyReply> {
  const { db, ctx } = deps;
  switch (outcome.kind) {
    case 'stale':
      return renderUpstreamProblem(request, reply, { problem: 'stale', provider: null });
    case 'refused':
      return renderUpstreamProblem(request, reply, {
        problem: 'refused',
        provider: outcome.provider.displayName,
        trip: outcome.trip,
        said: [outcome.error, outcome.description].filter(Boolean).join(': '),
      });
    case 'failed':
      return renderUpstreamProblem(request, reply, {
        problem: outcome.reason,
        provider: outcome.provider.displayName,
        trip: outcome.trip,
      });
    case 'disabled':
      return renderUpstreamProblem(request, reply, {
        problem: 'disabled',
        provider: outcome.provider.displayName,
        trip: outcome.trip,
      });
    case 'link_taken':
      return renderUpstreamProblem(request, reply, {
        problem: 'taken',
        provider: outcome.provider.displayName,
        trip: LINK_TRIP,
      });
    case 'wrong_account':
      return renderUpstreamProblem(request, reply, {
        problem: 'wrong_account',
        provider: outcome.provider.displayName,
        trip: LINK_TRIP,
      });
    case 'linked':
      return reply.redirect('/account/security?providers=linked#providers', 303);
    case 'reauthenticated': {
      const session = await loadSession(request, deps);
      if (!session || session.userId !== outcome.userId)
        return renderUpstreamProblem(request, reply, { problem: 'stale', provider: null });
      await recordReauthentication(request, deps, session);
      await auditRequest(db, ctx, request, {
        actor: `user:${outcome.userId}`,
        action: 'reauthenticated',
        subject: `user:${outcome.userId}`,
        details: { method: 'provider', provider: outcome.provider.name },
      });
      return reply.redirect(outcome.flow.returnTo ?? '/account', 303);
    }
    case 'new_identity':
      setPendingIdentityCookie(request, reply, ctx, outcome.pending);
      return reply.redirect('/signin/providers/continue', 303);
    case 'signed_in': {
      const flow = flowFrom({ request: outcome.flow.requestId, return_to: outcome.flow.returnTo });
      await auditRequest(db, ctx, request, {
        actor: `user:${outcome.userId}`,
        action: 'sign_in',
        subject: `user:${outcome.userId}`,
        details: {
          via: 'provider',
          provider: outcome.provider.name,
          ...(outcome.secondFactor ? { second_factor: 'pending' } : {}),
        },
      });
      if (outcome.secondFactor) {
        // As after a password (docs/pages.md): the first step alone is no session; the second
        // step's amr then says `fed otp mfa`.
        setPendingSignInCookie(request, reply, ctx, await startPendingSignIn(db, ctx, outcome.userId, 'fed'));
        return reply.redirect(`/signin/second-factor${flowQueryString(flow)}`, 303);
      }
      return completeSignIn(request, reply, deps, { userId: outcome.userId, amr: outcome.amr, flow });
    }
  }
}

/**
 * Sign-in through another provider: `POST /signin/providers/{name}` starts it (a button of the
 * sign-in and sign-up pages), `/signin/providers/{name}/callback` finishes it (GET, and POST for
 * Apple's form_post).
 */
export const upstreamRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/signin/providers/:name',
    {
      config: {
        auth: 'browser',
        description: 'Continue with another provider (form POST, CSRF token): redirects to the provider',
        csrf: true,
        rateLimit: 'signin',
        switchBase: () => '/signin',
      },
      schema: { params: providerParams, body: startBody },
    },
    async (request, reply) => {
      const flow = flowFrom(request.body);
      return goToProvider(request, reply, deps, { provider: request.params.name, purpose: 'sign_in', flow });
    },
  );

  routes.get(
    '/signin/providers/:name/callback',
    {
      config: {
        auth: 'browser',
        description: "A provider's answer (RFC 6749 §4.1.2): signs in, or asks for a username, or links",
      },
      schema: { params: providerParams, querystring: callbackQuery },
    },
    async (request, reply) => {
      const checks = presentedTrip(request, deps.ctx);
      clearTripCookie(request, reply, deps.ctx);
      const session = await loadSession(request, deps);
      const callback = new URL(request.url, deps.ctx.config.PUBLIC_URL);
      const sealedUser = callback.searchParams.get('user');
      const appleUser = sealedUser === null ? null : openAppleUser(deps.ctx, sealedUser);
      if (appleUser === null) callback.searchParams.delete('user');
      else callback.searchParams.set('user', appleUser);
      const outcome = await finishUpstream(deps.db, deps.ctx, {
        provider: request.params.name,
        callback,
        checks,
        sessionUserId: session?.userId ?? null,
        ip: request.ip,
        locale: pageLocale(request),
      });
      if (outcome.kind === 'failed')
        request.log.warn(
          { provider: request.params.name, reason: outcome.reason },
          'upstream provider failed',
        );
      return answer(request, reply, deps, outcome);
    },
  );

  routes.post(
    '/signin/providers/:name/callback',
    {
      config: {
        auth: 'browser',
        description:
          "A provider's form_post answer (Apple): sent on as the same-site GET that carries this browser's cookies",
        // The provider's page posts it: no form of ours, so no CSRF token; `state` and the sealed
        // trip cookie are the check, at the GET.
        rateLimit: 'signin',
      },
      schema: { params: providerParams, body: callbackBody },
    },
    async (request, reply) => {
      // A cross-site POST carries no SameSite=Lax cookie; the redirect that follows is a top-level
      // GET from the provider's navigation, which does.
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(request.body))
        if (typeof value === 'string')
          params.set(key, key === 'user' ? sealAppleUser(deps.ctx, value) : value);
      return reply.redirect(`/signin/providers/${request.params.name}/callback?${params}`, 303);
    },
  );
};
