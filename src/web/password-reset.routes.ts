import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Context, Deps } from '../context.js';
import { PREFIX } from '../lib/secrets.js';
import {
  findPasswordResetAccount,
  PASSWORD_FORGOT_PATH,
  PASSWORD_RESET_PATH,
  type PasswordResetField,
  type PasswordResetProblem,
  requestPasswordReset,
  resetPassword,
} from '../modules/accounts/password-reset.service.js';
import type { MailLocale } from '../modules/mail/mail.service.js';
import { listPasskeys } from '../modules/passkeys/passkeys.repository.js';
import { issueCsrfToken } from './csrf.js';
import { formBody, password, text } from './page-forms.js';
import { PageError, pageLocale, renderPage } from './pages.js';

const forgotBody = formBody({ csrf_token: text, login: text });
const resetQuery = z.object({ token: text });
const resetBody = formBody({
  csrf_token: text,
  token: text,
  username: text,
  password,
  password_confirm: password,
  revoke_apps: text,
});

/** A value that can be a reset token at all; anything else is refused before any lookup. */
function tokenOf(value: string | undefined): string {
  if (!value?.startsWith(PREFIX.passwordReset) || value.length > 100)
    throw new PageError(400, 'reset_link_invalid');
  return value;
}

/** What a `/password/forgot` POST asks for, kept until its answer is sent. */
const pendingRequests = new WeakMap<FastifyRequest, { login: string; locale: MailLocale; ip: string }>();

function renderReset(
  ctx: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  page: {
    token: string;
    username: string;
    revokeApps: boolean;
    errors?: Partial<Record<PasswordResetField, PasswordResetProblem>>;
  },
): FastifyReply {
  // No password is ever put back into the page; the language switch reopens the link.
  return renderPage(
    reply.code(page.errors ? 400 : 200),
    'reset',
    { csrfToken: issueCsrfToken(request, reply, ctx), ...page, errors: page.errors ?? {} },
    { switchBase: `${PASSWORD_RESET_PATH}?token=${encodeURIComponent(page.token)}` },
  );
}

/**
 * `/password/forgot` and `/password/reset?token=pr_…`. No session is needed: the
 * link in the mailbox is the proof.
 */
export const passwordResetRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    PASSWORD_FORGOT_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Forgotten password page (HTML form: username or e-mail)',
      },
    },
    async (request, reply) => renderPage(reply, 'forgot', { csrfToken: issueCsrfToken(request, reply, ctx) }),
  );

  routes.post(
    PASSWORD_FORGOT_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Ask for a password reset link (form POST, CSRF token); the same answer whether an account matches or not',
        csrf: true,
        rateLimit: 'signin',
        // Each request may send a mail: counted under the address's limit even when it succeeds.
        costly: true,
        switchBase: () => PASSWORD_FORGOT_PATH,
      },
      schema: { body: forgotBody },
      // docs/pages.md: the same status, body and time whether an account matches or not. Uniform
      // by construction: the answer is sent before anything is looked up, and the lookup, the link
      // and its message are made after it. Losing that work to a crash in between is harmless (the
      // person asks again); once made, the link and its message are committed together.
      onResponse: async (request, reply) => {
        const pending = pendingRequests.get(request);
        if (!pending || reply.statusCode !== 200) return;
        pendingRequests.delete(request);
        app.afterResponse.run('password reset request', () => requestPasswordReset(db, ctx, pending));
      },
    },
    async (request, reply) => {
      const login = (request.body.login ?? '').trim();
      if (login === '')
        return renderPage(reply.code(400), 'forgot', {
          csrfToken: issueCsrfToken(request, reply, ctx),
          error: 'login_missing',
        });
      pendingRequests.set(request, { login, locale: pageLocale(request, reply), ip: request.ip });
      // No CSRF token on this page: nothing in it depends on the request but its language.
      return renderPage(reply, 'forgot-sent', {});
    },
  );

  routes.get(
    PASSWORD_RESET_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Password reset page (HTML form: new password twice, revoke apps); opening it uses nothing',
      },
      schema: { querystring: resetQuery },
    },
    async (request, reply) => {
      const token = tokenOf(request.query.token);
      const account = await findPasswordResetAccount(db, ctx, token);
      if (!account) throw new PageError(400, 'reset_link_invalid');
      return renderReset(ctx, request, reply, { token, username: account.username, revokeApps: true });
    },
  );

  routes.post(
    PASSWORD_RESET_PATH,
    {
      config: {
        // The grants and devices it ends are refused on every instance once the page answers.
        revokes: true,
        auth: 'browser',
        description:
          'Set a new password with a reset link (form POST, CSRF token; 30 min, single use): ends every session and device, and optionally every app’s access',
        csrf: true,
        rateLimit: 'signin',
        switchBase: () => PASSWORD_FORGOT_PATH,
      },
      schema: { body: resetBody },
    },
    async (request, reply) => {
      const form = request.body;
      const token = tokenOf(form.token);
      // An unticked checkbox is not sent at all (HTML forms).
      const revokeApps = form.revoke_apps !== undefined;
      const result = await resetPassword(db, ctx, {
        token,
        password: form.password ?? '',
        passwordConfirm: form.password_confirm ?? '',
        revokeApps,
        ip: request.ip,
      });
      // The reset signs nobody in: its passkeys are listed, to be removed once signed in, as a
      // passkey keeps signing in whoever registered it whatever the password.
      if (result.ok)
        return renderPage(reply, 'reset-done', {
          passkeys: (await listPasskeys(db, result.userId)).map(({ name, createdAt }) => ({
            name,
            createdAt,
          })),
        });
      if (result.reason === 'link_invalid') throw new PageError(400, 'reset_link_invalid');
      const account = await findPasswordResetAccount(db, ctx, token);
      if (!account) throw new PageError(400, 'reset_link_invalid');
      return renderReset(ctx, request, reply, {
        token,
        username: account.username,
        revokeApps,
        errors: result.errors,
      });
    },
  );
};
