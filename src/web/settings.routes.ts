import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Context, Deps } from '../context.js';
import { findUserById } from '../modules/accounts/accounts.repository.js';
import {
  changeOwnPassword,
  type PasswordChangeField,
  type PasswordChangeProblem,
} from '../modules/accounts/password.service.js';
import {
  changeOwnProfile,
  type ProfileField,
  type ProfileProblem,
} from '../modules/accounts/profile.service.js';
import type { User } from '../modules/accounts/user.js';
import { issueCsrfToken } from './csrf.js';
import { trustedBrowser } from './device-cookie.js';
import { formBody, password, text } from './page-forms.js';
import { requiredSession, SIGN_IN_TO_ACCOUNT } from './page-guards.js';
import { PageError, renderPage } from './pages.js';

const PROFILE_PATH = '/account/profile';
const PASSWORD_PATH = '/account/password';

const profileBody = formBody({ csrf_token: text, display_name: text, avatar_url: text });
/**
 * `username` is a hidden field holding the signed-in account's name: the route-level per-account
 * limit (`checksPassword`, src/http/rate-limit.ts) keys on the body's username, and password
 * managers use it to know which account's password changes.
 */
const passwordBody = formBody({
  csrf_token: text,
  username: text,
  current_password: password,
  new_password: password,
  password_confirm: password,
});

function renderProfile(
  ctx: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  page: {
    values: { displayName: string; avatarUrl: string };
    errors?: Partial<Record<ProfileField, ProfileProblem>>;
    status?: number;
  },
): FastifyReply {
  return renderPage(
    reply.code(page.status ?? 200),
    'profile',
    {
      csrfToken: issueCsrfToken(request, reply, ctx),
      // Kept as typed on a re-render; the form's schema already bounds them (`text`).
      values: page.values,
      errors: page.errors ?? {},
    },
    { switchBase: PROFILE_PATH },
  );
}

function renderPassword(
  ctx: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  page: {
    username: string;
    errors?: Partial<Record<PasswordChangeField, PasswordChangeProblem>>;
    status?: number;
  },
): FastifyReply {
  // No password is ever put back into the page.
  return renderPage(
    reply.code(page.status ?? 200),
    'password',
    { csrfToken: issueCsrfToken(request, reply, ctx), username: page.username, errors: page.errors ?? {} },
    { switchBase: PASSWORD_PATH },
  );
}

/** The signed-in user, or undefined when the account went away under a live session. */
async function signedInUser(deps: Deps, request: FastifyRequest): Promise<User | undefined> {
  return findUserById(deps.db, requiredSession(request).userId);
}

/** `/account/profile` and `/account/password`: the account's own settings. */
export const settingsRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    PROFILE_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Profile page (HTML form: display name, avatar URL)',
        session: 'required',
      },
    },
    async (request, reply) => {
      const user = await signedInUser(deps, request);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT);
      return renderProfile(ctx, request, reply, {
        values: { displayName: user.displayName ?? '', avatarUrl: user.avatarUrl ?? '' },
      });
    },
  );

  routes.post(
    PROFILE_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Change the display name and avatar URL (form POST, CSRF token); an empty value removes it',
        csrf: true,
        rateLimit: 'signin',
        session: 'required',
        switchBase: () => PROFILE_PATH,
      },
      schema: { body: profileBody },
    },
    async (request, reply) => {
      const form = request.body;
      const values = { displayName: form.display_name ?? '', avatarUrl: form.avatar_url ?? '' };
      const result = await changeOwnProfile(db, ctx, {
        userId: requiredSession(request).userId,
        ...values,
        ip: request.ip,
      });
      if (!result.ok)
        return renderProfile(ctx, request, reply, { values, errors: result.errors, status: 400 });
      return reply.redirect('/account?notice=profile_updated', 303);
    },
  );

  routes.get(
    PASSWORD_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Password page (HTML form: current password, new password, confirmation)',
        session: 'required',
      },
    },
    async (request, reply) => {
      const user = await signedInUser(deps, request);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT);
      return renderPassword(ctx, request, reply, { username: user.username });
    },
  );

  routes.post(
    PASSWORD_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Change the password (form POST, CSRF token): checks the current one, ends the other browser sessions',
        checksPassword: true,
        csrf: true,
        rateLimit: 'signin',
        session: 'required',
        switchBase: () => PASSWORD_PATH,
      },
      schema: { body: passwordBody },
    },
    async (request, reply) => {
      const form = request.body;
      const session = requiredSession(request);
      const user = await signedInUser(deps, request);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT, 303);
      // The per-account limit counted this request under the body's username: a password is
      // checked only when that is the signed-in account, so no request escapes that account's limit
      // by naming another (the page always sends the right one).
      if ((form.username ?? '').toLowerCase() !== user.username.toLowerCase())
        throw new PageError(400, 'bad_request', { detail: 'the form is not for the signed-in account' });
      const result = await changeOwnPassword(db, ctx, {
        userId: user.id,
        username: user.username,
        currentPassword: form.current_password ?? '',
        newPassword: form.new_password ?? '',
        passwordConfirm: form.password_confirm ?? '',
        keepSessionIdHash: session.idHash,
        trustedSource: trustedBrowser(request),
        ip: request.ip,
      });
      if (!result.ok)
        return renderPassword(ctx, request, reply, {
          username: user.username,
          errors: result.errors,
          status: 400,
        });
      return reply.redirect('/account?notice=password_changed', 303);
    },
  );
};
