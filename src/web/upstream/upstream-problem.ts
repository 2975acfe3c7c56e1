import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UpstreamTexts } from '../i18n/upstream-texts.js';
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
  page: { problem: UpstreamProblem; provider: string | null; retry?: string; said?: string | null },
): FastifyReply {
  return renderPage(reply.code(STATUS[page.problem]), 'upstream-problem', {
    problem: page.problem,
    provider: page.provider ?? '',
    retry: page.retry ?? '/signin',
    said: page.said ?? null,
  });
}
