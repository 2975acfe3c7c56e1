import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../context.js';
import { PASSWORD_ONLY } from '../lib/amr.js';
import { authenticate } from '../modules/accounts/accounts.service.js';
import { signUpAndSendVerification } from '../modules/accounts/email-verification.service.js';
import type { SignUpField, SignUpProblem } from '../modules/accounts/sign-up.service.js';
import { auditRequest } from '../modules/audit/audit.repository.js';
import { startPendingSignIn } from '../modules/mfa/second-factor.service.js';
import { issueCsrfToken } from './csrf.js';
import { trustedBrowser } from './device-cookie.js';
import { messages, type SignInError } from './i18n/index.js';
import {
  destination,
  echo,
  type Flow,
  flowFields,
  flowFrom,
  flowQuery,
  flowQueryString,
  formBody,
  password,
  text,
} from './page-forms.js';
import { pageLocale, renderPage } from './pages.js';
import { passkeySignInData } from './passkeys-section.js';
import { setPendingSignInCookie } from './pending-sign-in-cookie.js';
import { appFormTargets, appImageOrigins, requestingApp } from './requesting-app.js';
import { endSession, startSession } from './session.js';
import { completeSignIn } from './sign-in-completion.js';
import { flowHidden, providerButtons } from './upstream/provider-buttons.js';

const signInBody = formBody({ ...flowFields, csrf_token: text, username: text, password });
const signUpBody = formBody({ ...flowFields, csrf_token: text, username: text, password, email: text });
const signOutBody = formBody({ csrf_token: text });
/** `expired`: the password step of a sign-in ran out before its second factor. */
const signInQuery = z.object({ ...flowFields, expired: text });

async function renderSignIn(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  page: { flow: Flow; username?: string; error?: SignInError; status?: number; expired?: boolean },
): Promise<FastifyReply> {
  const { ctx } = deps;
  const app = await requestingApp(deps, page.flow.requestId);
  const providers = await providerButtons(deps);
  return renderPage(
    reply.code(page.status ?? 200),
    'signin',
    {
      csrfToken: issueCsrfToken(request, reply, ctx),
      username: echo(page.username),
      error: page.error,
      notice: page.expired ? messages(pageLocale(request)).security.stepExpired : undefined,
      requestId: page.flow.requestId,
      returnTo: page.flow.returnTo,
      signupHref: `/signup${flowQueryString(page.flow)}`,
      passkeySignIn: passkeySignInData(),
      providers: { buttons: providers.buttons, hidden: flowHidden(page.flow) },
      app,
    },
    {
      switchBase: `/signin${flowQueryString(page.flow)}`,
      imageOrigins: appImageOrigins(app),
      // A sign-in resuming a request whose consent is remembered is redirected on to the app; a
      // provider's button is answered with a redirect to the provider.
      formTargets: [...appFormTargets(app), ...providers.formTargets],
    },
  );
}

async function renderSignUp(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  page: {
    flow: Flow;
    values?: { username?: string; email?: string };
    errors?: Partial<Record<SignUpField, SignUpProblem>>;
    status?: number;
  },
): Promise<FastifyReply> {
  const providers = await providerButtons(deps);
  return renderPage(
    reply.code(page.status ?? 200),
    'signup',
    {
      csrfToken: issueCsrfToken(request, reply, deps.ctx),
      // Values are kept on a re-render, except the password.
      values: { username: echo(page.values?.username), email: echo(page.values?.email) },
      errors: page.errors ?? {},
      requestId: page.flow.requestId,
      returnTo: page.flow.returnTo,
      signinHref: `/signin${flowQueryString(page.flow)}`,
      providers: { buttons: providers.buttons, hidden: flowHidden(page.flow) },
    },
    { switchBase: `/signup${flowQueryString(page.flow)}`, formTargets: providers.formTargets },
  );
}

/** Sign-in, sign-up and sign-out (HTML forms; every POST carries a CSRF token). */
export const signInRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    '/signin',
    {
      config: { auth: 'browser', description: 'Sign-in page (HTML form: username, password)' },
      schema: { querystring: signInQuery },
    },
    async (request, reply) =>
      renderSignIn(deps, request, reply, { flow: flowFrom(request.query), expired: !!request.query.expired }),
  );

  routes.post(
    '/signin',
    {
      config: {
        auth: 'browser',
        description: 'Sign in with username and password (form POST, CSRF token); redirects on success',
        checksPassword: true,
        csrf: true,
        rateLimit: 'signin',
        // The language switch of the page answering the form leads back to the form.
        switchBase: () => '/signin',
      },
      schema: { body: signInBody },
    },
    async (request, reply) => {
      const form = request.body;
      const flow = flowFrom(form);
      const username = form.username ?? '';
      const password = form.password ?? '';
      if (username.trim() === '' || password === '')
        return renderSignIn(deps, request, reply, {
          flow,
          username,
          error: 'missing_credentials',
          status: 400,
        });

      const result = await authenticate(db, ctx, {
        username,
        password,
        trustedSource: trustedBrowser(request),
      });
      await auditRequest(db, ctx, request, {
        actor: result.ok ? `user:${result.user.id}` : 'anonymous',
        action: result.ok ? 'sign_in' : 'sign_in_failed',
        subject: result.ok
          ? `user:${result.user.id}`
          : `username:${username.trim().toLowerCase().slice(0, 64)}`,
        details: result.ok
          ? { via: 'page', ...(result.secondFactor ? { second_factor: 'pending' } : {}) }
          : { via: 'page', reason: result.reason },
      });
      if (!result.ok) {
        // One message for an unknown user and a wrong password: the page never tells which
        // usernames exist. "Disabled" is said only to someone who knows the password.
        return result.reason === 'disabled'
          ? renderSignIn(deps, request, reply, { flow, username, error: 'account_disabled', status: 403 })
          : renderSignIn(deps, request, reply, { flow, username, error: 'wrong_credentials', status: 401 });
      }
      if (result.secondFactor) {
        // docs/pages.md: the password step alone is no session and grants nothing; it waits 5
        // minutes for the second factor, in this browser only.
        setPendingSignInCookie(request, reply, ctx, await startPendingSignIn(db, ctx, result.user.id));
        return reply.redirect(`/signin/second-factor${flowQueryString(flow)}`, 303);
      }
      return completeSignIn(request, reply, deps, { userId: result.user.id, amr: PASSWORD_ONLY, flow });
    },
  );

  routes.get(
    '/signup',
    {
      config: {
        auth: 'browser',
        description: 'Sign-up page (HTML form: username, password, optional e-mail)',
      },
      schema: { querystring: flowQuery },
    },
    async (request, reply) => renderSignUp(deps, request, reply, { flow: flowFrom(request.query) }),
  );

  routes.post(
    '/signup',
    {
      config: {
        auth: 'browser',
        description: 'Create an account (form POST, CSRF token), sign in and redirect',
        csrf: true,
        rateLimit: 'signin',
        // An account, a password hash and a mail: counted under the address's limit even when it succeeds.
        costly: true,
        switchBase: () => '/signup',
      },
      schema: { body: signUpBody },
    },
    async (request, reply) => {
      const form = request.body;
      const flow = flowFrom(form);
      const values = { username: form.username ?? '', email: form.email ?? '' };
      // The verification message is written in the language of the page.
      const signUpForm = { ...values, password: form.password ?? '' };
      const result = await signUpAndSendVerification(db, ctx, signUpForm, pageLocale(request));
      if (!result.ok)
        return renderSignUp(deps, request, reply, { flow, values, errors: result.errors, status: 400 });
      await auditRequest(db, ctx, request, {
        actor: `user:${result.user.id}`,
        action: 'sign_up',
        subject: `user:${result.user.id}`,
      });
      await startSession(request, reply, deps, result.user.id);
      return reply.redirect(destination(flow), 303);
    },
  );

  routes.post(
    '/signout',
    {
      config: {
        auth: 'browser',
        description: 'Sign out (form POST, CSRF token): ends the browser session',
        csrf: true,
        rateLimit: 'signin',
      },
      schema: { body: signOutBody },
    },
    async (request, reply) => {
      await endSession(request, reply, deps);
      return reply.redirect('/signin', 303);
    },
  );
};
