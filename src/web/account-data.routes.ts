import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../context.js';
import { deleteAccount } from '../modules/accounts/account-deletion.service.js';
import { exportAccountData } from '../modules/accounts/account-export.service.js';
import { findUserById } from '../modules/accounts/accounts.repository.js';
import { hasOwnPassword } from '../modules/upstream/links.service.js';
import { issueCsrfToken } from './csrf.js';
import { trustedBrowser } from './device-cookie.js';
import { formBody, password, text } from './page-forms.js';
import { requiredSession, SIGN_IN_TO_ACCOUNT } from './page-guards.js';
import { pageLocale, renderPage } from './pages.js';
import { endSession } from './session.js';

const exportBody = formBody({ csrf_token: text });
// `username` is the hidden field that tells password managers whose password this is; not read.
const deleteBody = formBody({ csrf_token: text, username: text, password, confirm_username: text });

type DeleteError = 'missing_password' | 'wrong_password' | 'wrong_username';

/** The download's file name: the username, kept to characters every file system and header takes. */
function exportFileName(username: string): string {
  return `idp-export-${username.replace(/[^A-Za-z0-9_-]/g, '_')}.json`;
}

async function renderDelete(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  page: { username: string; error?: DeleteError; status?: number },
): Promise<FastifyReply> {
  return renderPage(reply.code(page.status ?? 200), 'delete', {
    csrfToken: issueCsrfToken(request, reply, deps.ctx),
    username: page.username,
    error: page.error,
    // An account made through a provider has no password: its username, typed, confirms instead.
    hasPassword: await hasOwnPassword(deps.db, page.username),
  });
}

/**
 * The account's data: `/account/export`, a JSON download of everything stored
 * about the user, and `/account/delete`, the deletion of the account once the password is
 * confirmed. Both POSTs carry the CSRF token and count against the sign-in limit.
 */
export const accountDataRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    '/account/export',
    {
      config: {
        auth: 'browser',
        description: 'Data export page: what the download of your data holds, and its button',
        session: 'required',
        // Sudo mode: everything stored about the account is not for a copied cookie alone.
        reauth: 'required',
      },
    },
    async (request, reply) => {
      requiredSession(request);
      return renderPage(reply, 'export', { csrfToken: issueCsrfToken(request, reply, ctx) });
    },
  );

  routes.post(
    '/account/export',
    {
      config: {
        auth: 'browser',
        description: 'Download everything stored about you as JSON (form POST, CSRF token)',
        csrf: true,
        rateLimit: 'signin',
        session: 'required',
        reauth: 'required',
        switchBase: () => '/account/export',
      },
      schema: { body: exportBody },
    },
    async (request, reply) => {
      const session = requiredSession(request);
      const data = await exportAccountData(db, ctx, {
        userId: session.userId,
        ip: request.ip,
        locale: pageLocale(request),
      });
      if (!data) return reply.redirect(SIGN_IN_TO_ACCOUNT, 303);
      return reply
        .header('cache-control', 'no-store')
        .header(
          'content-disposition',
          `attachment; filename="${exportFileName(data.profile.username as string)}"`,
        )
        .header('x-content-type-options', 'nosniff')
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(data, null, 2));
    },
  );

  routes.get(
    '/account/delete',
    {
      config: {
        auth: 'browser',
        description: 'Account deletion page: what deleting the account does, and the password to confirm it',
        session: 'required',
        reauth: 'required',
      },
    },
    async (request, reply) => {
      const user = await findUserById(db, requiredSession(request).userId);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT);
      return renderDelete(deps, request, reply, { username: user.username });
    },
  );

  routes.post(
    '/account/delete',
    {
      config: {
        auth: 'browser',
        description:
          'Delete your account (form POST, CSRF token, password): signs out everywhere, ends every app access',
        csrf: true,
        rateLimit: 'signin',
        session: 'required',
        reauth: 'required',
        switchBase: () => '/account/delete',
      },
      schema: { body: deleteBody },
    },
    async (request, reply) => {
      const session = requiredSession(request);
      const user = await findUserById(db, session.userId);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT, 303);
      const given = request.body.password ?? '';
      const typedUsername = request.body.confirm_username;
      if (given === '' && typedUsername === undefined)
        return renderDelete(deps, request, reply, {
          username: user.username,
          error: 'missing_password',
          status: 400,
        });
      const result = await deleteAccount(db, ctx, {
        userId: user.id,
        password: given,
        typedUsername,
        trustedSource: trustedBrowser(request),
        ip: request.ip,
        locale: pageLocale(request),
      });
      if (!result.ok)
        return renderDelete(deps, request, reply, {
          username: user.username,
          error: typedUsername === undefined ? 'wrong_password' : 'wrong_username',
          status: 401,
        });
      // Every session of the account is already gone; this clears the browser's cookie.
      await endSession(request, reply, deps);
      return reply.redirect('/account/deleted', 303);
    },
  );

  routes.get(
    '/account/deleted',
    { config: { auth: 'browser', description: 'Says that the account was deleted (after /account/delete)' } },
    async (_request, reply) => renderPage(reply, 'deleted', {}),
  );
};
