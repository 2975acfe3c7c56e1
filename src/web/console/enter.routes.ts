import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { safeReturnPath } from '../../lib/return-to.js';
import { secondFactorsOf } from '../../modules/mfa/second-factor.service.js';
import {
  checkConsoleCode,
  closeConsoleSession,
  openConsoleSession,
  reproveConsoleSession,
} from '../../modules/operators/console-access.service.js';
import { trustedBrowser } from '../device-cookie.js';
import { formBody, text } from '../page-forms.js';
import { PageError, pageLocale } from '../pages.js';
import { passkeySignInData } from '../passkeys-section.js';
import { requiredOperator } from './console-guard.js';
import { renderConsolePage } from './console-pages.js';
import {
  CONSOLE_ENTER_PATH,
  CONSOLE_PATH,
  CONSOLE_REAUTH_PATH,
  clearConsoleCookie,
  setConsoleCookie,
} from './console-session.js';
import { consoleTexts } from './i18n/index.js';

const returnQuery = z.object({ return_to: text });
const codeForm = formBody({ csrf_token: text, code: text, return_to: text });

export type ProofError = 'wrongCode' | 'locked' | 'missing';

/** A console path to come back to; anything else (another site, the rest of the service) is the dashboard. */
export function consoleReturnPath(value: string | undefined): string {
  const path = safeReturnPath(value);
  return path && (path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`)) ? path : CONSOLE_PATH;
}

/** The entry and re-authentication page: the code form for an authenticator app, "Use a passkey" for a passkey. */
async function renderProof(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  page: { mode: 'enter' | 'reauth'; returnTo: string | undefined; error?: ProofError; status?: number },
): Promise<FastifyReply> {
  const operator = requiredOperator(request);
  const factors = await secondFactorsOf(deps.db, operator.userId);
  // RFC-free house rule: the console opens only with a second factor (docs/operating.md "The console").
  if (!factors.totp && !factors.passkey) throw new PageError(403, 'console_needs_second_factor');
  const c = consoleTexts(pageLocale(request, reply)).common;
  const action = page.mode === 'enter' ? CONSOLE_ENTER_PATH : CONSOLE_REAUTH_PATH;
  const returnTo = consoleReturnPath(page.returnTo);
  return renderConsolePage(
    reply,
    deps,
    'console/enter',
    {
      title: page.mode === 'enter' ? c.enter.title : c.reauth.title,
      mode: page.mode,
      action,
      returnTo,
      error: page.error,
      totp: factors.totp,
      passkey: factors.passkey,
      passkeySignIn: passkeySignInData(),
      passkeyUrls: {
        options: `${CONSOLE_ENTER_PATH}/passkey/options`,
        verify: `${CONSOLE_ENTER_PATH}/passkey/verify`,
      },
      minutes: Math.max(1, Math.round(deps.ctx.config.ADMIN_REAUTH_MAX_AGE_SECONDS / 60)),
    },
    { status: page.status, switchBase: `${action}?return_to=${encodeURIComponent(returnTo)}` },
  );
}

/**
 * Entering the console (/admin/enter), proving again for destructive actions
 * (/admin/reauthenticate), the session's page and leaving. Entering needs an operator's account
 * session and a second factor: a code from the authenticator app (checked with the second step's
 * budgets) or a passkey (console-passkey.routes.ts).
 */
export const consoleEnterRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const switchTo = (path: string) => (request: FastifyRequest) =>
    `${path}?return_to=${encodeURIComponent(consoleReturnPath((request.body as { return_to?: string })?.return_to))}`;

  /**
   * Checks the form's code: undefined when it passed, else what the page says again. (Not the
   * reply itself: a Fastify reply is a thenable, and awaiting one waits for it to be sent.)
   */
  const codeProblem = async (
    request: FastifyRequest,
  ): Promise<{ error: ProofError; status: number } | undefined> => {
    const form = request.body as z.infer<typeof codeForm>;
    const operator = requiredOperator(request);
    const code = (form.code ?? '').trim();
    if (code === '') return { error: 'missing', status: 400 };
    const result = await checkConsoleCode(db, ctx, {
      userId: operator.userId,
      code,
      trustedSource: trustedBrowser(request),
      ip: request.ip,
      locale: pageLocale(request),
    });
    if (result.ok) return undefined;
    return { error: result.locked ? 'locked' : 'wrongCode', status: 401 };
  };

  routes.get(
    CONSOLE_ENTER_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Enter the console with a second factor (HTML form)',
        console: { entry: true },
      },
      schema: { querystring: returnQuery },
    },
    async (request, reply) =>
      renderProof(request, reply, deps, { mode: 'enter', returnTo: request.query.return_to }),
  );

  routes.post(
    CONSOLE_ENTER_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Open a console session with an authenticator code (form POST, CSRF token); redirects back',
        csrf: true,
        rateLimit: 'signin',
        console: { entry: true },
        switchBase: switchTo(CONSOLE_ENTER_PATH),
      },
      schema: { body: codeForm },
    },
    async (request, reply) => {
      const problem = await codeProblem(request);
      if (problem)
        return renderProof(request, reply, deps, {
          mode: 'enter',
          returnTo: request.body.return_to,
          ...problem,
        });
      const operator = requiredOperator(request);
      const opened = await openConsoleSession(db, ctx, {
        userId: operator.userId,
        accountSessionHash: operator.account.idHash,
        method: 'totp',
        ip: request.ip,
      });
      setConsoleCookie(request, reply, deps, opened.value);
      return reply.redirect(consoleReturnPath(request.body.return_to), 303);
    },
  );

  routes.get(
    CONSOLE_REAUTH_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Prove the second factor again before a destructive action (HTML form)',
        console: { can: 'view' },
      },
      schema: { querystring: returnQuery },
    },
    async (request, reply) =>
      renderProof(request, reply, deps, { mode: 'reauth', returnTo: request.query.return_to }),
  );

  routes.post(
    CONSOLE_REAUTH_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Record a new second-factor proof on the console session (form POST, CSRF token); redirects back',
        csrf: true,
        rateLimit: 'signin',
        console: { can: 'view' },
        switchBase: switchTo(CONSOLE_REAUTH_PATH),
      },
      schema: { body: codeForm },
    },
    async (request, reply) => {
      const problem = await codeProblem(request);
      if (problem)
        return renderProof(request, reply, deps, {
          mode: 'reauth',
          returnTo: request.body.return_to,
          ...problem,
        });
      const session = requiredOperator(request).session;
      if (session) await reproveConsoleSession(db, ctx, { session, method: 'totp', ip: request.ip });
      return reply.redirect(consoleReturnPath(request.body.return_to), 303);
    },
  );

  routes.get(
    '/admin/session',
    {
      config: {
        auth: 'browser',
        description: 'The console session: role, last proof, end (HTML)',
        console: { can: 'view' },
      },
    },
    async (request, reply) => {
      const operator = requiredOperator(request);
      const c = consoleTexts(pageLocale(request, reply)).common;
      return renderConsolePage(reply, deps, 'console/session', {
        title: c.sessionPage.title,
        session: operator.session,
      });
    },
  );

  routes.post(
    '/admin/leave',
    {
      config: {
        auth: 'browser',
        description:
          'Leave the console: its session ends, the account stays signed in (form POST, CSRF token)',
        csrf: true,
        rateLimit: 'signin',
        console: { can: 'view' },
        switchBase: () => '/admin/session',
      },
      schema: { body: formBody({ csrf_token: text }) },
    },
    async (request, reply) => {
      const session = requiredOperator(request).session;
      if (session) await closeConsoleSession(db, ctx, { session, ip: request.ip });
      clearConsoleCookie(request, reply);
      return reply.redirect('/account?notice=console_left', 303);
    },
  );
};
