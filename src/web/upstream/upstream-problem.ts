import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeReturnPath } from '../../lib/return-to.js';
import type { TripKind } from '../../modules/upstream/upstream-sign-in.service.js';
import type { UpstreamTexts } from '../i18n/upstream-texts.js';
import { flowFrom, flowQueryString } from '../page-forms.js';
import { renderPage } from '../pages.js';

export type UpstreamProblem = keyof UpstreamTexts['problems'];

/** The HTTP status of each problem: the provider's failures are a bad gateway, the rest the request's. */
const STATUS: Record<UpstreamProblem, number> = {
  unreachable: 502,
  invalid_response: 502,
  misconfigured: 502,
  refused: 403,
  stale: 400,
  unknown: 404,
  taken: 409,
  wrong_account: 403,
  disabled: 403,
};

/**
 * The page that says which provider failed and what to do: try again, or sign in another way.
 * `said`: the provider's own error code and words, when it sent them (shown escaped).
 */
export function renderUpstreamProblem(
  _request: FastifyRequest,
  reply: FastifyReply,
  page: { problem: UpstreamProblem; provider: string | null; trip?: TripKind; said?: string | null },
): FastifyReply {
  const back = page.trip ? retryPath(page.trip) : '/signin';
  return renderPage(reply.code(STATUS[page.problem]), 'upstream-problem', {
    problem: page.problem,
    provider: page.provider ?? '',
    // Back where the trip started (the sign-in page of the site's request, the account's section,
    // the re-authentication page), which offers every other way too.
    retry: back,
    said: page.said ?? null,
  });
}

/** Where "Try again" leads: the page the trip started from, with the site's request kept. */
function retryPath(trip: TripKind): string {
  if (trip.purpose === 'link') return '/account/security#providers';
  if (trip.purpose === 'reauth') {
    const to = safeReturnPath(trip.flow.returnTo);
    return `/account/reauthenticate${to ? `?return_to=${encodeURIComponent(to)}` : ''}`;
  }
  return `/signin${flowQueryString(flowFrom({ request: trip.flow.requestId, return_to: trip.flow.returnTo }))}`;
}
