import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Context, Deps } from '../context.js';
import { findUserById } from '../modules/accounts/accounts.repository.js';
import {
  type EmailChangeField,
  type EmailChangeProblem,
  requestEmailChange,
} from '../modules/accounts/email-change.service.js';
import { findPendingEmailChange } from '../modules/accounts/email-verification.repository.js';
import { resendEmailVerification } from '../modules/accounts/email-verification.service.js';
import type { User } from '../modules/accounts/user.js';
import { issueCsrfToken } from './csrf.js';
import { trustedBrowser } from './device-cookie.js';
import { echo, formBody, password, text } from './page-forms.js';
import { requiredSession, SIGN_IN_TO_ACCOUNT } from './page-guards.js';
import { PageError, pageLocale, renderPage } from './pages.js';

const EMAIL_PATH = '/account/email';
const RESEND_PATH = '/account/email/resend';

/**
 * `username` is a hidden field holding the signed-in account's name, as on `/account/password`:
 * the per-account limit (`checksPassword`) keys on it, and password managers read it.
 */
const changeBody = formBody({
  csrf_token: text,
  username: text,
  new_email: text,
  current_password: password,
});
const resendBody = formBody({ csrf_token: text });

async function renderEmailPage(
  ctx: Context,
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  page: {
    user: User;
    newEmail?: string;
    errors?: Partial<Record<EmailChangeField, EmailChangeProblem>>;
    status?: number;
  },
): Promise<FastifyReply> {
  const { user } = page;
  const pending = await findPendingEmailChange(deps.db, { userId: user.id, now: ctx.clock.now() });
  // No password is ever put back into the page; the address typed is, bounded (`echo`).
  return renderPage(
    reply.code(page.status ?? 200),
    'email',
    {
      csrfToken: issueCsrfToken(request, reply, ctx),
      username: user.username,
      current: { email: user.email, verified: user.emailVerified },
      pending: pending?.email,
      values: { newEmail: echo(page.newEmail) },
      errors: page.errors ?? {},
    },
    { switchBase: EMAIL_PATH },
  );
}

/**
 * `/account/email`: the address and its state, a form for a new address (which
 * takes effect only once verified through a link sent to it), and a new link for an unverified one.
 */
export const accountEmailRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    EMAIL_PATH,
    {
      config: {
        auth: 'browser',
        description: 'E-mail page: the address, whether it is verified, a pending change, the change form',
        session: 'required',
        // Sudo mode: the address is where a password reset goes.
        reauth: 'required',
      },
    },
    async (request, reply) => {
      const user = await findUserById(db, requiredSession(request).userId);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT);
      return renderEmailPage(ctx, deps, request, reply, { user });
    },
  );

  routes.post(
    EMAIL_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Ask to change the e-mail address (form POST, CSRF token, current password): sends a link to the new one',
        checksPassword: true,
        csrf: true,
        rateLimit: 'signin',
        session: 'required',
        reauth: 'required',
        switchBase: () => EMAIL_PATH,
      },
      schema: { body: changeBody },
    },
    async (request, reply) => {
      const form = request.body;
      const user = await findUserById(db, requiredSession(request).userId);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT, 303);
      // As on /account/password: the per-account limit counted this request under the body's
      // username, so a password is checked only when that is the signed-in account.
      if ((form.username ?? '').toLowerCase() !== user.username.toLowerCase())
        throw new PageError(400, 'bad_request', { detail: 'the form is not for the signed-in account' });
      const newEmail = form.new_email ?? '';
      const result = await requestEmailChange(db, ctx, {
        user,
        newEmail,
        currentPassword: form.current_password ?? '',
        trustedSource: trustedBrowser(request),
        // The message to the new address is in the language of this page.
        locale: pageLocale(request),
        ip: request.ip,
      });
      if (!result.ok)
        return renderEmailPage(ctx, deps, request, reply, {
          user,
          newEmail,
          errors: result.errors,
          status: 400,
        });
      return reply.redirect('/account?notice=email_change_sent', 303);
    },
  );

  routes.post(
    RESEND_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Send a new verification link for the current, unverified e-mail address (form POST, CSRF token)',
        csrf: true,
        rateLimit: 'signin',
        session: 'required',
        switchBase: () => EMAIL_PATH,
      },
      schema: { body: resendBody },
    },
    async (request, reply) => {
      const sent = await resendEmailVerification(db, ctx, {
        userId: requiredSession(request).userId,
        locale: pageLocale(request),
      });
      // The form is shown only for an unverified address; one verified or gone since has no link to send.
      if (sent === 'nothing_to_verify')
        throw new PageError(400, 'bad_request', { detail: 'the address has nothing to verify' });
      if (sent === 'limit') throw new PageError(429, 'mail_limit');
      return reply.redirect('/account?notice=verification_sent', 303);
    },
  );
};
