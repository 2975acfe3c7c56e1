import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../context.js';
import { findUserById } from '../modules/accounts/accounts.repository.js';
import { auditRequest } from '../modules/audit/audit.repository.js';
import { listSignedInDevices, signOutDevice } from '../modules/mobile/devices.service.js';
import { listAuthorizedApps } from '../modules/oauth/consents.repository.js';
import { revokeAppAccess } from '../modules/oauth/consents.service.js';
import { accountDataRoutes } from './account-data.routes.js';
import { accountEmailRoutes } from './account-email.routes.js';
import { assetRoutes } from './assets/assets.routes.js';
import { issueCsrfToken } from './csrf.js';
import { developersRoutes } from './developers/developers.routes.js';
import { developersTexts } from './developers/i18n/index.js';
import { deviceRoutes } from './device/device.routes.js';
import { emailVerifyRoutes } from './email-verify.routes.js';
import { homeRoutes } from './home.routes.js';
import { isAccountNotice } from './i18n/index.js';
import { formBody, text } from './page-forms.js';
import { requiredSession, SIGN_IN_TO_ACCOUNT } from './page-guards.js';
import { pageLocale, renderPage } from './pages.js';
import { passwordResetRoutes } from './password-reset.routes.js';
import { secondFactorRoutes } from './second-factor.routes.js';
import { securityRoutes } from './security.routes.js';
import { settingsRoutes } from './settings.routes.js';
import { signInRoutes } from './sign-in.routes.js';
import { accountLinksRoutes } from './upstream/account-links.routes.js';
import { upstreamContinueRoutes } from './upstream/continue.routes.js';
import { upstreamRoutes } from './upstream/upstream.routes.js';

const accountQuery = z.object({ notice: text });
const revokeBody = formBody({ csrf_token: text, client_id: text });
const deviceSignOutBody = formBody({ csrf_token: text, device: text });

/** A site URL is linked only when it is http(s); anything else is shown as text. */
export function linkableSiteUrl(siteUrl: string): string | null {
  try {
    const url = new URL(siteUrl);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * The account page's avatar: a stored path is this service's own file, shown as it is; an absolute
 * URL is shown from its host, whose origin the page's CSP then admits (img-src) for this page only.
 */
function avatarOf(stored: string | null): { src: string; origin: string | null } | null {
  if (!stored) return null;
  if (stored.startsWith('/')) return { src: stored, origin: null };
  try {
    const url = new URL(stored);
    return url.protocol === 'https:' || url.protocol === 'http:'
      ? { src: url.href, origin: url.origin }
      : null;
  } catch {
    return null;
  }
}

/** The pages of a browser: sign-in (sign-in.routes.ts), the account page and its forms, their assets. */
export const accountRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const { clock } = ctx;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  await app.register(assetRoutes);

  // Pages and their redirects carry session cookies and CSRF tokens: never stored by any cache.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  await app.register(homeRoutes, deps);
  await app.register(signInRoutes, deps);
  await app.register(settingsRoutes, deps);
  await app.register(accountDataRoutes, deps);
  await app.register(emailVerifyRoutes, deps);
  await app.register(passwordResetRoutes, deps);
  await app.register(accountEmailRoutes, deps);
  await app.register(securityRoutes, deps);
  await app.register(secondFactorRoutes, deps);
  await app.register(upstreamRoutes, deps);
  await app.register(upstreamContinueRoutes, deps);
  await app.register(accountLinksRoutes, deps);
  await app.register(deviceRoutes, deps);
  await app.register(developersRoutes, deps);

  routes.get(
    '/account',
    {
      config: {
        auth: 'browser',
        description:
          'Account page: profile, e-mail, password, the apps the user allowed, their signed-in devices, their data',
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
      const avatar = avatarOf(user.avatarUrl);
      const imageOrigins = avatar?.origin ? [avatar.origin] : [];
      return renderPage(
        reply,
        'account',
        {
          csrfToken: issueCsrfToken(request, reply, ctx),
          developersLink: developersTexts(pageLocale(request, reply)).accountLink,
          // Notices are known keys only: the query never puts text of its own on the page.
          notice: isAccountNotice(notice) ? notice : undefined,
          user: {
            username: user.username,
            displayName: user.displayName,
            avatarSrc: avatar?.src ?? null,
            email: user.email,
            emailVerified: user.emailVerified,
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
        },
        { imageOrigins },
      );
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
        await auditRequest(db, ctx, request, {
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
        await auditRequest(db, ctx, request, {
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
