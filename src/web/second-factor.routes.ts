import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../context.js';
import { CODE_FACTOR, PASSWORD_AND_CODE, UPSTREAM_AND_CODE } from '../lib/amr.js';
import {
  finishPendingSignIn,
  pendingSignInOf,
  secondFactorsOf,
  verifySecondFactor,
} from '../modules/mfa/second-factor.service.js';
import { issueCsrfToken } from './csrf.js';
import { rememberBrowser, trustedBrowser } from './device-cookie.js';
import {
  destination,
  type Flow,
  flowFields,
  flowFrom,
  flowQuery,
  flowQueryString,
  formBody,
  text,
} from './page-forms.js';
import { pageLocale, renderPage } from './pages.js';
import { passkeySignInData } from './passkeys-section.js';
import { clearPendingSignInCookie, presentedPendingSignIn } from './pending-sign-in-cookie.js';
import { appFormTargets, requestingApp } from './requesting-app.js';
import { type BrowserSession, loadSession, upgradeSession } from './session.js';
import { completeSignIn } from './sign-in-completion.js';

const STEP_PATH = '/signin/second-factor';
const stepBody = formBody({ ...flowFields, csrf_token: text, code: text });

/**
 * Whose second step this is: the pending sign-in of this browser (a password just entered), or,
 * without one, its signed-in user, whom a site asked for a second factor (authorize with
 * `acr_values=mfa`). `pending` is the pending sign-in's cookie value.
 */
async function stepOwner(
  request: FastifyRequest,
  deps: Deps,
): Promise<
  | { userId: number; pending: string; firstFactor: 'pwd' | 'fed'; session?: undefined }
  | { userId: number; pending: null; session: BrowserSession }
  | null
> {
  const pending = presentedPendingSignIn(request);
  const pendingSignIn = pending ? await pendingSignInOf(deps.db, deps.ctx, pending) : null;
  if (pending && pendingSignIn !== null) return { ...pendingSignIn, pending };
  const session = await loadSession(request, deps);
  return session ? { userId: session.userId, pending: null, session } : null;
}

async function renderStep(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  page: { flow: Flow; factors: { totp: boolean; passkey: boolean }; wrong?: boolean },
): Promise<FastifyReply> {
  // A step that resumes a request whose consent is remembered is redirected on to the app.
  const app = await requestingApp(deps, page.flow.requestId);
  return renderPage(
    reply.code(page.wrong ? 401 : 200),
    'second-factor',
    {
      csrfToken: issueCsrfToken(request, reply, deps.ctx),
      wrong: page.wrong ?? false,
      // The code field serves TOTP and recovery codes; an account with passkeys only has none.
      codeForm: page.factors.totp || !page.factors.passkey,
      // "Use a passkey" only for an account that has one: it would fail for any other.
      passkeySignIn: page.factors.passkey ? passkeySignInData() : null,
      requestId: page.flow.requestId,
      returnTo: page.flow.returnTo,
      signinHref: `/signin${flowQueryString(page.flow)}`,
    },
    { switchBase: `${STEP_PATH}${flowQueryString(page.flow)}`, formTargets: appFormTargets(app) },
  );
}

/** Back to the password: the step ran out (5 minutes), was finished, or never began in this browser. */
function startOver(request: FastifyRequest, reply: FastifyReply, deps: Deps, flow: Flow): FastifyReply {
  clearPendingSignInCookie(request, reply, deps.ctx);
  const query = flowQueryString(flow);
  return reply.redirect(`/signin${query ? `${query}&` : '?'}expired=1`, 303);
}

/**
 * `/signin/second-factor`: after a right password, a TOTP or recovery code
 * finishes the sign-in (amr pwd otp mfa, or fed otp mfa after a provider's sign-in). For a signed-in session (a site's `acr_values=mfa`), it
 * upgrades the session instead: `otp mfa` are added, `auth_time` stays, and prompt=login or
 * max_age are not satisfied by it (they need the password or a passkey). Failed codes count
 * against the sign-in limits.
 */
export const secondFactorRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    STEP_PATH,
    {
      config: { auth: 'browser', description: 'Second step of sign-in: a TOTP or recovery code (HTML form)' },
      schema: { querystring: flowQuery },
    },
    async (request, reply) => {
      const flow = flowFrom(request.query);
      const owner = await stepOwner(request, deps);
      if (!owner) return startOver(request, reply, deps, flow);
      // A signed-in account with no second factor yet sets one up first.
      const factors = await secondFactorsOf(db, owner.userId);
      if (!owner.pending && !factors.totp && !factors.passkey)
        return reply.redirect(`/account/security${flowQueryString(flow)}`, 303);
      return renderStep(request, reply, deps, { flow, factors });
    },
  );

  routes.post(
    STEP_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Finish signing in with a TOTP or recovery code (form POST, CSRF token); redirects on success',
        csrf: true,
        rateLimit: 'signin',
        switchBase: () => STEP_PATH,
      },
      schema: { body: stepBody },
    },
    async (request, reply) => {
      const form = request.body;
      const flow = flowFrom(form);
      const owner = await stepOwner(request, deps);
      if (!owner) return startOver(request, reply, deps, flow);
      const result = await verifySecondFactor(db, ctx, {
        userId: owner.userId,
        code: (form.code ?? '').trim(),
        trustedSource: trustedBrowser(request),
        ip: request.ip,
        locale: pageLocale(request),
      });
      if (!result.ok) {
        const factors = await secondFactorsOf(db, owner.userId);
        return renderStep(request, reply, deps, { flow, factors, wrong: true });
      }
      if (owner.pending === null) {
        // The session's owner passed a second factor: the session gains it, and that is all. No
        // new sign-in happened, so no new session id and no new auth_time (upgradeSession says why).
        await upgradeSession(request, deps, owner.session, CODE_FACTOR);
        rememberBrowser(request, reply, ctx, owner.userId);
        return reply.redirect(destination(flow), 303);
      }
      // A pending sign-in finishes once: a second request with another good code starts over.
      if (!(await finishPendingSignIn(db, ctx, owner.pending))) return startOver(request, reply, deps, flow);
      clearPendingSignInCookie(request, reply, ctx);
      // The first step's method stays in `amr`: a password's `pwd`, a provider's `fed` (docs/pages.md).
      const amr = owner.firstFactor === 'fed' ? UPSTREAM_AND_CODE : PASSWORD_AND_CODE;
      return completeSignIn(request, reply, deps, { userId: owner.userId, amr, flow });
    },
  );
};
