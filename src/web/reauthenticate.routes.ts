import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../context.js';
import { safeReturnPath } from '../lib/return-to.js';
import { findUserById } from '../modules/accounts/accounts.repository.js';
import { authenticate } from '../modules/accounts/accounts.service.js';
import { auditRequest } from '../modules/audit/audit.repository.js';
import { secondFactorsOf, verifySecondFactor } from '../modules/mfa/second-factor.service.js';
import { hasOwnPassword } from '../modules/upstream/links.service.js';
import { issueCsrfToken } from './csrf.js';
import { trustedBrowser } from './device-cookie.js';
import type { ReauthError } from './i18n/reauth-texts.js';
import { formBody, password, text } from './page-forms.js';
import { REAUTHENTICATE_PATH, requiredSession, SIGN_IN_TO_ACCOUNT } from './page-guards.js';
import { pageLocale, renderPage } from './pages.js';
import { recordReauthentication } from './session.js';
import { reauthProviderButtons } from './upstream/linked-providers.js';

const reauthQuery = z.object({ return_to: text });
/**
 * `username`: the signed-in account's, a hidden field as on `/account/password`, for the
 * per-account limit (`checksPassword`) and password managers. `password` or `code`: the proof.
 */
const reauthBody = formBody({ csrf_token: text, username: text, password, code: text, return_to: text });

/** Where the person goes once re-authenticated: a safe local path (open redirects refused), else the account page. */
function returnPath(value: string | undefined): string {
  return safeReturnPath(value) ?? '/account';
}

async function renderReauth(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  page: {
    userId: number;
    username: string;
    returnTo: string | undefined;
    error?: ReauthError;
    status?: number;
  },
): Promise<FastifyReply> {
  const factors = await secondFactorsOf(deps.db, page.userId);
  const returnTo = safeReturnPath(page.returnTo) ?? undefined;
  const providers = await reauthProviderButtons(deps, page.userId);
  return renderPage(
    reply.code(page.status ?? 200),
    'reauthenticate',
    {
      csrfToken: issueCsrfToken(request, reply, deps.ctx),
      username: page.username,
      returnTo,
      error: page.error,
      // The code form serves TOTP and recovery codes: only for an account with an authenticator app.
      codeForm: factors.totp,
      minutes: Math.max(1, Math.round(deps.ctx.config.REAUTH_MAX_AGE_SECONDS / 60)),
      hasPassword: await hasOwnPassword(deps.db, page.username),
      providers,
    },
    {
      switchBase: `${REAUTHENTICATE_PATH}${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`,
      formTargets: providers.formTargets,
    },
  );
}

/**
 * `/account/reauthenticate` ("sudo mode"): a signed-in person proves again who they are, with the
 * password or a TOTP or recovery code, before the pages declared `reauth: 'required'` (second
 * factors, passkeys, recovery codes, the e-mail address, export, deletion) open for
 * REAUTH_MAX_AGE_SECONDS. The proof is checked as at sign-in (`authenticate`, `verifySecondFactor`:
 * failures count in the same budgets), and recorded on the session; it is no sign-in (the
 * session's `auth_time` and `amr` stay, so prompt=login and max_age are not satisfied by it).
 */
export const reauthenticateRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    REAUTHENTICATE_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Confirm it is you (password or code) before changing how the account signs in (HTML form)',
        session: 'required',
      },
      schema: { querystring: reauthQuery },
    },
    async (request, reply) => {
      const user = await findUserById(db, requiredSession(request).userId);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT);
      return renderReauth(request, reply, deps, {
        userId: user.id,
        username: user.username,
        returnTo: request.query.return_to,
      });
    },
  );

  routes.post(
    REAUTHENTICATE_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Record a re-authentication on the session (form POST, CSRF token, password or code); redirects back',
        checksPassword: true,
        csrf: true,
        rateLimit: 'signin',
        session: 'required',
        switchBase: (request) =>
          `${REAUTHENTICATE_PATH}?return_to=${encodeURIComponent(
            returnPath((request.body as { return_to?: string } | undefined)?.return_to),
          )}`,
      },
      schema: { body: reauthBody },
    },
    async (request, reply) => {
      const session = requiredSession(request);
      const user = await findUserById(db, session.userId);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT, 303);
      const form = request.body;
      const page = { userId: user.id, username: user.username, returnTo: form.return_to };
      const given = form.password ?? '';
      const code = (form.code ?? '').trim();
      if (given === '' && code === '')
        return renderReauth(request, reply, deps, { ...page, error: 'missing', status: 400 });
      const trustedSource = trustedBrowser(request);
      // The same checks as the sign-in page and its second step, with their budgets: a wrong
      // password or code here counts exactly as one there, and nothing here clears a budget.
      const proven =
        given !== ''
          ? await authenticate(db, ctx, {
              username: user.username,
              password: given,
              trustedSource,
            }).then((result) => result.ok && result.user.id === user.id)
          : (
              await verifySecondFactor(db, ctx, {
                userId: user.id,
                code,
                trustedSource,
                ip: request.ip,
                locale: pageLocale(request),
              })
            ).ok;
      const actor = `user:${user.id}`;
      if (!proven) {
        await auditRequest(db, ctx, request, {
          actor,
          action: 'reauthentication_failed',
          subject: actor,
          details: { method: given !== '' ? 'password' : 'code' },
        });
        return renderReauth(request, reply, deps, {
          ...page,
          error: given !== '' ? 'wrong_password' : 'wrong_code',
          status: 401,
        });
      }
      await recordReauthentication(request, deps, session);
      await auditRequest(db, ctx, request, {
        actor,
        action: 'reauthenticated',
        subject: actor,
        details: { method: given !== '' ? 'password' : 'code' },
      });
      return reply.redirect(returnPath(form.return_to), 303);
    },
  );
};
