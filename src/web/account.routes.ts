import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../context.js';
import { safeReturnPath } from '../lib/return-to.js';
import { findUserById } from '../modules/accounts/accounts.repository.js';
import {
  authenticate,
  type SignUpField,
  type SignUpProblem,
  signUp,
} from '../modules/accounts/accounts.service.js';
import { auditRequest } from '../modules/audit/audit.repository.js';
import { listSignedInDevices, signOutDevice } from '../modules/mobile/mobile.service.js';
import { listAuthorizedApps } from '../modules/oauth/consents.repository.js';
import { revokeAppAccess } from '../modules/oauth/consents.service.js';
import { assetRoutes } from './assets/assets.routes.js';
import { issueCsrfToken } from './csrf.js';
import { rememberBrowser, trustedBrowser } from './device-cookie.js';
import { isAccountNotice, type SignInError } from './i18n.js';
import { requiredSession, SIGN_IN_TO_ACCOUNT } from './page-guards.js';
import { renderPage } from './pages.js';
import { endSession, startSession } from './session.js';

/** An OAuth authorization request id, as the authorize endpoint hands it to the sign-in page. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;

/** Every field of the forms is bounded before any work on it (no field of ours comes near this). */
const text = z.string().max(4096).optional();
/** Passwords are only compared, never transformed: a long one is answered as a wrong one, with no argon2 work on it. */
const password = z.string().optional();

/** `request`: absent or empty (a hidden field left blank) means none; anything else must be an id. */
const requestIdField = z
  .union([
    z.literal(''),
    z.string().regex(REQUEST_ID_PATTERN, 'request must be an authorization request id (base64url, ≤ 100)'),
  ])
  .optional()
  .transform((value) => value || undefined);

/** Where to go after signing in: carried by the pages' query strings and hidden fields. */
const flowFields = { request: requestIdField, return_to: text };

const flowQuery = z.object(flowFields);

/** A form body; a POST without one is an empty form (and so fails the CSRF check, 403). */
const formBody = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.preprocess((value) => value ?? {}, z.object(shape));

const signInBody = formBody({ ...flowFields, csrf_token: text, username: text, password });
const signUpBody = formBody({ ...flowFields, csrf_token: text, username: text, password, email: text });
const signOutBody = formBody({ csrf_token: text });
const revokeBody = formBody({ csrf_token: text, client_id: text });
const deviceSignOutBody = formBody({ csrf_token: text, device: text });
const accountQuery = z.object({ notice: text });

/** Where the browser goes once signed in, and what the pages carry along to get there. */
interface Flow {
  requestId?: string;
  /** Only ever a safe same-origin path (safeReturnPath); unsafe values are dropped on arrival. */
  returnTo?: string;
}

function flowFrom(input: { request?: string; return_to?: string }): Flow {
  return { requestId: input.request, returnTo: safeReturnPath(input.return_to) ?? undefined };
}

/** `?request=…&return_to=…` for the links between sign-in and sign-up (empty when there is nothing). */
function flowQueryString(flow: Flow): string {
  const params = new URLSearchParams();
  if (flow.requestId) params.set('request', flow.requestId);
  if (flow.returnTo) params.set('return_to', flow.returnTo);
  const query = params.toString();
  return query ? `?${query}` : '';
}

/**
 * After sign-in: back into the OAuth flow when an authorization request is waiting, else the safe
 * `return_to` path, else the account page.
 */
function destination(flow: Flow): string {
  if (flow.requestId) return `/api/v1/oauth/authorize/resume?request=${encodeURIComponent(flow.requestId)}`;
  return flow.returnTo ?? '/account';
}

/** Echoed input is capped: the pages never grow with what a request sends. */
const ECHO_MAX_LENGTH = 256;
const echo = (value: string | undefined) => (value ?? '').slice(0, ECHO_MAX_LENGTH);

/** A site URL is linked only when it is http(s); anything else is shown as text. */
function linkableSiteUrl(siteUrl: string): string | null {
  try {
    const url = new URL(siteUrl);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

/** Sign-up, sign-in, sign-out and the account page (HTML forms; every POST carries a CSRF token). */
export const accountRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const { clock } = ctx;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  await app.register(assetRoutes);

  // Pages and their redirects carry session cookies and CSRF tokens: never stored by any cache.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  function renderSignIn(
    request: FastifyRequest,
    reply: FastifyReply,
    page: { flow: Flow; username?: string; error?: SignInError; status?: number },
  ): FastifyReply {
    return renderPage(
      reply.code(page.status ?? 200),
      'signin',
      {
        csrfToken: issueCsrfToken(request, reply, deps.ctx),
        username: echo(page.username),
        error: page.error,
        requestId: page.flow.requestId,
        returnTo: page.flow.returnTo,
        signupHref: `/signup${flowQueryString(page.flow)}`,
      },
      { switchBase: `/signin${flowQueryString(page.flow)}` },
    );
  }

  function renderSignUp(
    request: FastifyRequest,
    reply: FastifyReply,
    page: {
      flow: Flow;
      values?: { username?: string; email?: string };
      errors?: Partial<Record<SignUpField, SignUpProblem>>;
      status?: number;
    },
  ): FastifyReply {
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
      },
      { switchBase: `/signup${flowQueryString(page.flow)}` },
    );
  }

  routes.get(
    '/signin',
    {
      config: { auth: 'browser', description: 'Sign-in page (HTML form: username, password)' },
      schema: { querystring: flowQuery },
    },
    async (request, reply) => renderSignIn(request, reply, { flow: flowFrom(request.query) }),
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
        return renderSignIn(request, reply, { flow, username, error: 'missing_credentials', status: 400 });

      const result = await authenticate(db, ctx, username, password, trustedBrowser(request));
      await auditRequest(deps.db, deps.ctx, request, {
        actor: result.ok ? `user:${result.user.id}` : 'anonymous',
        action: result.ok ? 'sign_in' : 'sign_in_failed',
        subject: result.ok
          ? `user:${result.user.id}`
          : `username:${username.trim().toLowerCase().slice(0, 64)}`,
        details: result.ok ? { via: 'page' } : { via: 'page', reason: result.reason },
      });
      if (!result.ok) {
        // One message for an unknown user and a wrong password: the page never tells which
        // usernames exist. "Disabled" is said only to someone who knows the password.
        return result.reason === 'disabled'
          ? renderSignIn(request, reply, { flow, username, error: 'account_disabled', status: 403 })
          : renderSignIn(request, reply, { flow, username, error: 'wrong_credentials', status: 401 });
      }
      await startSession(request, reply, deps, result.user.id);
      rememberBrowser(request, reply, deps.ctx, result.user.id);
      return reply.redirect(destination(flow), 303);
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
    async (request, reply) => renderSignUp(request, reply, { flow: flowFrom(request.query) }),
  );

  routes.post(
    '/signup',
    {
      config: {
        auth: 'browser',
        description: 'Create an account (form POST, CSRF token), sign in and redirect',
        csrf: true,
        rateLimit: 'signin',
        switchBase: () => '/signup',
      },
      schema: { body: signUpBody },
    },
    async (request, reply) => {
      const form = request.body;
      const flow = flowFrom(form);
      const values = { username: form.username ?? '', email: form.email ?? '' };
      const result = await signUp(db, clock, { ...values, password: form.password ?? '' });
      if (!result.ok)
        return renderSignUp(request, reply, { flow, values, errors: result.errors, status: 400 });
      await auditRequest(deps.db, deps.ctx, request, {
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

  routes.get(
    '/account',
    {
      config: {
        auth: 'browser',
        description: 'Account page: the signed-in user, the apps they allowed and their signed-in devices',
        session: 'required',
      },
      schema: { querystring: accountQuery },
    },
    async (request, reply) => {
      const user = await findUserById(db, requiredSession(request).userId);
      if (!user) return reply.redirect(SIGN_IN_TO_ACCOUNT);
      const apps = await listAuthorizedApps(db, user.id);
      const devices = await listSignedInDevices(db, user.id);
      const notice = request.query.notice;
      return renderPage(reply, 'account', {
        csrfToken: issueCsrfToken(request, reply, deps.ctx),
        // Notices are known keys only: the query never puts text of its own on the page.
        notice: isAccountNotice(notice) ? notice : undefined,
        user: {
          username: user.username,
          displayName: user.display_name,
          email: user.email,
          emailVerified: user.email_verified,
        },
        apps: apps.map((authorized) => ({
          clientId: authorized.clientId,
          name: authorized.name,
          siteUrl: authorized.siteUrl,
          siteHref: linkableSiteUrl(authorized.siteUrl),
          scopes: authorized.scopes,
          grantedAt: authorized.grantedAt.toISOString(),
        })),
        devices: devices.map((device) => ({
          id: device.id,
          label: device.label,
          signedInAt: device.signedInAt.toISOString(),
          lastUsedAt: device.lastUsedAt.toISOString(),
        })),
      });
    },
  );

  routes.post(
    '/account/apps/revoke',
    {
      config: {
        revokes: true,
        auth: 'browser',
        description:
          "Revoke an app's access (form POST, CSRF token): forgets the consent, revokes its tokens",
        csrf: true,
        rateLimit: 'signin',
        session: 'required',
      },
      schema: { body: revokeBody },
    },
    async (request, reply) => {
      const form = request.body;
      const session = requiredSession(request);
      const clientId = form.client_id ?? '';
      const revoked =
        clientId.length > 0 && clientId.length <= 200
          ? await revokeAppAccess(db, { userId: session.userId, clientId, at: clock.now() })
          : false;
      if (revoked) {
        await auditRequest(deps.db, deps.ctx, request, {
          actor: `user:${session.userId}`,
          action: 'app_revoked',
          subject: `client:${clientId}`,
        });
      }
      return reply.redirect(`/account?notice=${revoked ? 'revoked' : 'unknown_app'}`, 303);
    },
  );

  routes.post(
    '/account/devices/signout',
    {
      config: {
        revokes: true,
        auth: 'browser',
        description:
          'Sign a device of the mobile app out (form POST, CSRF token): its tokens and key stop working',
        csrf: true,
        rateLimit: 'signin',
        session: 'required',
      },
      schema: { body: deviceSignOutBody },
    },
    async (request, reply) => {
      const form = request.body;
      const session = requiredSession(request);
      const deviceId = /^\d{1,15}$/.test(form.device ?? '') ? Number(form.device) : undefined;
      const signedOut =
        deviceId !== undefined &&
        (await signOutDevice(db, { userId: session.userId, deviceId, at: clock.now() }));
      if (signedOut) {
        await auditRequest(deps.db, deps.ctx, request, {
          actor: `user:${session.userId}`,
          action: 'device_signed_out',
          subject: `device:${deviceId}`,
          details: { via: 'account page' },
        });
      }
      return reply.redirect(`/account?notice=${signedOut ? 'device_signed_out' : 'unknown_device'}`, 303);
    },
  );
};
