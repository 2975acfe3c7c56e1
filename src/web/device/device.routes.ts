import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { formatUserCode, normalizeUserCode } from '../../lib/user-code.js';
import { findUserById } from '../../modules/accounts/accounts.repository.js';
import {
  checkUserCode,
  type DeviceRequest,
  decideDeviceRequest,
} from '../../modules/device/device-approval.service.js';
import { issueCsrfToken } from '../csrf.js';
import { trustedBrowser } from '../device-cookie.js';
import { echo, formBody, text } from '../page-forms.js';
import { renderPage } from '../pages.js';
import { type BrowserSession, loadSession } from '../session.js';

const DEVICE_PATH = '/device';
const deviceQuery = z.object({ user_code: text });
const codeBody = formBody({ csrf_token: text, user_code: text });
const decisionBody = formBody({ csrf_token: text, user_code: text, decision: text });

type CodeProblem = 'missing' | 'wrong' | 'locked' | 'busy';
const STATUS: Record<CodeProblem, number> = { missing: 400, wrong: 400, locked: 429, busy: 429 };

/** Signed in first (the usual sign-in, second factor included), then back here with the code kept. */
async function sessionOrSignIn(request: FastifyRequest, reply: FastifyReply, deps: Deps, code?: string) {
  const session = await loadSession(request, deps);
  if (session) return session;
  const back = `${DEVICE_PATH}${code ? `?user_code=${encodeURIComponent(code)}` : ''}`;
  reply.redirect(`/signin?return_to=${encodeURIComponent(back)}`, request.method === 'GET' ? 302 : 303);
  return null;
}

function renderEntry(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  page: { code?: string; problem?: CodeProblem },
): FastifyReply {
  return renderPage(reply.code(page.problem ? STATUS[page.problem] : 200), 'device', {
    csrfToken: issueCsrfToken(request, reply, deps.ctx),
    code: echo(page.code),
    problem: page.problem,
  });
}

async function renderConfirm(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  session: BrowserSession,
  found: DeviceRequest,
  code: string,
): Promise<FastifyReply> {
  const user = await findUserById(deps.db, session.userId);
  return renderPage(reply, 'device-confirm', {
    csrfToken: issueCsrfToken(request, reply, deps.ctx),
    code,
    client: { name: found.client.name, siteUrl: found.client.siteUrl },
    device: found.code.deviceLabel,
    scopes: found.code.scopes,
    allowedBefore: found.code.scopes.every((scope) => found.allowedBefore.includes(scope)),
    username: user?.username ?? '',
    walletRequested: found.code.scopes.includes('wallet'),
  });
}

/**
 * `/device` (RFC 8628 §3.3): a signed-in person types the code a device shows (or opens
 * `verification_uri_complete`, which fills it in and still asks), sees which app on which device
 * asks, and allows or denies it. Wrong codes count against the address, the account and the service.
 */
export const deviceRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    DEVICE_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Device sign-in (RFC 8628): the page to enter the code a device shows',
      },
      schema: { querystring: deviceQuery },
    },
    async (request, reply) => {
      const session = await sessionOrSignIn(request, reply, deps, request.query.user_code);
      if (!session) return reply;
      return renderEntry(request, reply, deps, { code: request.query.user_code });
    },
  );

  routes.post(
    DEVICE_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Device sign-in: check the code a device shows (form POST, CSRF token); wrong codes are limited',
        csrf: true,
        rateLimit: 'signin',
        switchBase: () => DEVICE_PATH,
      },
      schema: { body: codeBody },
    },
    async (request, reply) => {
      const typed = (request.body.user_code ?? '').trim();
      const session = await sessionOrSignIn(request, reply, deps, typed);
      if (!session) return reply;
      if (typed === '') return renderEntry(request, reply, deps, { problem: 'missing' });
      const check = await checkUserCode(db, ctx, {
        userId: session.userId,
        typed,
        trustedSource: trustedBrowser(request),
        ip: request.ip,
      });
      if (!check.ok) return renderEntry(request, reply, deps, { code: typed, problem: check.problem });
      return renderConfirm(
        request,
        reply,
        deps,
        session,
        check.request,
        formatUserCode(normalizeUserCode(typed) as string),
      );
    },
  );

  routes.post(
    `${DEVICE_PATH}/decision`,
    {
      config: {
        auth: 'browser',
        description: "Device sign-in: allow or deny a device's request (form POST, CSRF token)",
        csrf: true,
        rateLimit: 'signin',
        switchBase: () => DEVICE_PATH,
        // The decision ends the request's pending state kept in memory (DevicePollCache): this
        // instance's next poll of it must see the decision.
        revokes: true,
      },
      schema: { body: decisionBody },
    },
    async (request, reply) => {
      const session = await sessionOrSignIn(request, reply, deps);
      if (!session) return reply;
      // The code again, through the same limits as the page's first step.
      const typed = (request.body.user_code ?? '').trim();
      const check = await checkUserCode(db, ctx, {
        userId: session.userId,
        typed,
        trustedSource: trustedBrowser(request),
        ip: request.ip,
      });
      if (!check.ok) return renderEntry(request, reply, deps, { code: typed, problem: check.problem });
      const allow = request.body.decision === 'allow';
      const decided = await decideDeviceRequest(db, ctx, {
        userId: session.userId,
        request: check.request,
        allow,
        session: { authTime: session.authTime, amr: session.amr, sid: session.sid },
        ip: request.ip,
      });
      return renderPage(reply.code(decided.ok ? 200 : 400), 'device-done', {
        outcome: !decided.ok ? 'expired' : allow ? 'allowed' : 'denied',
        app: decided.ok ? decided.client.name : '',
      });
    },
  );
};
