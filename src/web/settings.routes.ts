import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
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
import { listPasskeys } from '../modules/passkeys/passkeys.repository.js';
import { issueCsrfToken } from './csrf.js';
import { trustedBrowser } from './device-cookie.js';
import { formBody, password, text } from './page-forms.js';
import { requiredSession, SIGN_IN_TO_ACCOUNT } from './page-guards.js';
import { PageError, renderPage } from './pages.js';
import { prepareSessionRotation } from './session-rotation.js';

const PROFILE_PATH = '/account/profile';
const PASSWORD_PATH = '/account/password';
const PASSWORD_CHANGED_PATH = '/account/password/changed';

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
  sign_out_devices: text,
  revoke_apps: text,
});
const changedQuery = z.object({ devices: text, apps: text });

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
    /** The boxes as they were sent; both ticked on a fresh form. */
    ends?: { signOutDevices: boolean; revokeApps: boolean };
    status?: number;
  },
): FastifyReply {
  // No password is ever put back into the page.
  return renderPage(
    reply.code(page.status ?? 200),
    'password',
    {
      csrfToken: issueCsrfToken(request, reply, ctx),
      username: page.username,
      errors: page.errors ?? {},
      ends: page.ends ?? { signOutDevices: true, revokeApps: true },
    },
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
          'Change the password (form POST, CSRF token): checks the current one, ends the other browser sessions and pending reset links, renews this session’s id, and optionally signs out the mobile app’s devices and ends every app’s access',
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
      // An unticked checkbox is not sent at all (HTML forms); the page ticks both by default.
      const ends = {
        signOutDevices: form.sign_out_devices !== undefined,
        revokeApps: form.revoke_apps !== undefined,
      };
      const rotation = prepareSessionRotation(request, reply, deps, session);
      const result = await changeOwnPassword(db, ctx, {
        userId: user.id,
        username: user.username,
        currentPassword: form.current_password ?? '',
        newPassword: form.new_password ?? '',
        passwordConfirm: form.password_confirm ?? '',
        keepSessionIdHash: session.idHash,
        ...ends,
        rotateSession: rotation.apply,
        trustedSource: trustedBrowser(request),
        ip: request.ip,
      });
      if (!result.ok)
        return renderPassword(ctx, request, reply, {
          username: user.username,
          errors: result.errors,
          ends,
          status: 400,
        });
      rotation.commit();
      // A redirect, not a page: the confirmation's forms carry a CSRF token bound to the new
      // session id, which only the next request presents.
      const flags = `devices=${ends.signOutDevices ? 1 : 0}&apps=${ends.revokeApps ? 1 : 0}`;
      return reply.redirect(`${PASSWORD_CHANGED_PATH}?${flags}`, 303);
    },
  );

  routes.get(
    PASSWORD_CHANGED_PATH,
    {
      config: {
        auth: 'browser',
        description:
          "After a password change: what it ended, and the account's passkeys with a remove button each",
        session: 'required',
      },
      schema: { querystring: changedQuery },
    },
    async (request, reply) => {
      const user = await signedInUser(deps, request);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT);
      // A passkey keeps signing in whoever registered it after the password changed: each is
      // shown with the existing removal form (/account/passkeys/remove).
      const passkeys = await listPasskeys(db, user.id);
      return renderPage(
        reply,
        'password-changed',
        {
          csrfToken: issueCsrfToken(request, reply, ctx),
          // Only which sentences to show: a forged query changes no state.
          devicesSignedOut: request.query.devices === '1',
          appsRevoked: request.query.apps === '1',
          passkeys: passkeys.map(({ id, name, createdAt }) => ({ id, name, createdAt })),
        },
        { switchBase: PASSWORD_CHANGED_PATH },
      );
    },
  );
};
