import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../context.js';
import { CODE_FACTOR } from '../lib/amr.js';
import { findUserById } from '../modules/accounts/accounts.repository.js';
import { authenticate } from '../modules/accounts/accounts.service.js';
import { auditRequest } from '../modules/audit/audit.repository.js';
import { renewRecoveryCodes } from '../modules/mfa/recovery-codes.service.js';
import { verifySecondFactor } from '../modules/mfa/second-factor.service.js';
import { confirmTotpEnrolment, disableTotp, startTotpEnrolment } from '../modules/mfa/totp.service.js';
import { looksLikeTotpCode } from '../modules/mfa/totp-code.js';
import { trustedBrowser } from './device-cookie.js';
import { PASSKEY_NOTICES } from './i18n/en-passkeys.js';
import { flowFields, flowFrom, flowQueryString, formBody, password, text } from './page-forms.js';
import { requiredSession, SIGN_IN_TO_ACCOUNT } from './page-guards.js';
import { PageError, pageLocale } from './pages.js';
import { reauthenticateRoutes } from './reauthenticate.routes.js';
import { renderSecurityPage, SECURITY_PATH } from './security-page.js';
import { upgradeSession } from './session.js';

const securityQuery = z.object({
  ...flowFields,
  notice: z
    .enum(['enabled', 'disabled', ...PASSKEY_NOTICES])
    .optional()
    .catch(undefined),
  providers: z.enum(['linked', 'unlinked', 'last_way']).optional().catch(undefined),
});
const flowBody = formBody({ ...flowFields, csrf_token: text });
const confirmBody = formBody({ ...flowFields, csrf_token: text, code: text });
/** `username`: the signed-in account's, for the per-account limit (`checksPassword`), as on `/account/email`. */
const disableBody = formBody({ csrf_token: text, username: text, proof: password });

/** `/account/security`: TOTP enrolment, recovery codes, disabling; passkeys alongside. */
export const securityRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  // The page that opens these forms (sudo mode) lives beside them.
  await app.register(reauthenticateRoutes, deps);
  const post = (path: string, description: string, extra: { checksPassword?: boolean } = {}) => ({
    config: {
      auth: 'browser' as const,
      description,
      csrf: true,
      rateLimit: 'signin' as const,
      session: 'required' as const,
      // Sudo mode: every form here adds, replaces or removes a way to sign in.
      reauth: 'required' as const,
      switchBase: () => SECURITY_PATH,
      ...extra,
    },
    path,
  });
  const signedInUser = async (request: FastifyRequest) => {
    const session = requiredSession(request);
    const user = await findUserById(db, session.userId);
    return user ? { session, user } : null;
  };

  routes.get(
    SECURITY_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Security page: two-step sign-in (TOTP), recovery codes, passkeys',
        session: 'required',
        reauth: 'required',
      },
      schema: { querystring: securityQuery },
    },
    async (request, reply) => {
      const found = await signedInUser(request);
      if (!found) return reply.redirect(SIGN_IN_TO_ACCOUNT);
      const flow = flowFrom(request.query);
      return renderSecurityPage(request, reply, deps, found.session, found.user, {
        flow,
        notice: request.query.notice,
        providersNotice: request.query.providers,
      });
    },
  );

  const start = post(
    `${SECURITY_PATH}/totp`,
    'Start setting up an authenticator app (form POST, CSRF token)',
  );
  routes.post(start.path, { config: start.config, schema: { body: flowBody } }, async (request, reply) => {
    const flow = flowFrom(request.body);
    const userId = requiredSession(request).userId;
    // Already on: the key is not replaced (disable first); the page shows the state either way.
    await startTotpEnrolment(db, ctx, { userId, ip: request.ip });
    return reply.redirect(`${SECURITY_PATH}${flowQueryString(flow)}`, 303);
  });

  const confirm = post(`${SECURITY_PATH}/totp/confirm`, 'Confirm the authenticator app with its first code');
  routes.post(
    confirm.path,
    { config: confirm.config, schema: { body: confirmBody } },
    async (request, reply) => {
      const found = await signedInUser(request);
      if (!found) return reply.redirect(SIGN_IN_TO_ACCOUNT, 303);
      const flow = flowFrom(request.body);
      const result = await confirmTotpEnrolment(db, ctx, {
        userId: found.user.id,
        code: (request.body.code ?? '').trim(),
        ip: request.ip,
        locale: pageLocale(request),
      });
      if (!result.ok)
        return renderSecurityPage(request, reply, deps, found.session, found.user, {
          flow,
          wrongCode: true,
          status: 400,
        });
      // A site asked for a second factor (acr_values=mfa): this session now has one, and the
      // request goes on once the codes have been seen. The session is upgraded, not signed in
      // anew: its auth_time and id stay, so prompt=login and max_age still need the password.
      const upgraded = flow.requestId !== undefined;
      const session = upgraded
        ? await upgradeSession(request, deps, found.session, CODE_FACTOR)
        : found.session;
      return renderSecurityPage(request, reply, deps, session, found.user, {
        flow,
        notice: 'enabled',
        recoveryCodes: result.recoveryCodes,
        upgraded,
      });
    },
  );

  const renew = post(`${SECURITY_PATH}/recovery-codes`, 'Make new recovery codes, replacing the old ones');
  routes.post(renew.path, { config: renew.config, schema: { body: flowBody } }, async (request, reply) => {
    const found = await signedInUser(request);
    if (!found) return reply.redirect(SIGN_IN_TO_ACCOUNT, 303);
    const codes = await renewRecoveryCodes(db, ctx, {
      userId: found.user.id,
      ip: request.ip,
      locale: pageLocale(request),
    });
    if (!codes) throw new PageError(400, 'bad_request', { detail: 'two-step sign-in is off' });
    return renderSecurityPage(request, reply, deps, found.session, found.user, {
      flow: flowFrom(request.body),
      recoveryCodes: codes,
    });
  });

  const disable = post(`${SECURITY_PATH}/totp/disable`, 'Turn off two-step sign-in (password or code)', {
    checksPassword: true,
  });
  routes.post(
    disable.path,
    { config: disable.config, schema: { body: disableBody } },
    async (request, reply) => {
      const found = await signedInUser(request);
      if (!found) return reply.redirect(SIGN_IN_TO_ACCOUNT, 303);
      const { user, session } = found;
      const form = request.body;
      if ((form.username ?? '').toLowerCase() !== user.username.toLowerCase())
        throw new PageError(400, 'bad_request', { detail: 'the form is not for the signed-in account' });
      const proof = form.proof ?? '';
      const trustedSource = trustedBrowser(request);
      const locale = pageLocale(request);
      // Six digits are a code (no password is that short); anything else is the password. Either
      // check counts against the sign-in limits.
      const proven = looksLikeTotpCode(proof)
        ? (
            await verifySecondFactor(db, ctx, {
              userId: user.id,
              code: proof,
              trustedSource,
              ip: request.ip,
              locale,
            })
          ).ok
        : await authenticate(db, ctx, { username: user.username, password: proof, trustedSource }).then(
            (result) => result.ok && result.user.id === user.id,
          );
      if (!proven) {
        await auditRequest(db, ctx, request, { actor: `user:${user.id}`, action: 'totp_disable_failed' });
        return renderSecurityPage(request, reply, deps, session, user, {
          flow: {},
          disableWrong: true,
          status: 400,
        });
      }
      await disableTotp(db, ctx, { userId: user.id, ip: request.ip, locale });
      return reply.redirect(`${SECURITY_PATH}?notice=disabled`, 303);
    },
  );
};
