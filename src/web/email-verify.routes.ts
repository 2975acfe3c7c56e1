import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../context.js';
import { PREFIX } from '../lib/secrets.js';
import {
  EMAIL_VERIFY_PATH,
  findEmailLinkAccount,
  verifyEmail,
} from '../modules/accounts/email-verification.service.js';
import { issueCsrfToken } from './csrf.js';
import { formBody, text } from './page-forms.js';
import { PageError, pageLocale, renderPage } from './pages.js';

const verifyQuery = z.object({ token: text });
const verifyBody = formBody({ csrf_token: text, token: text });

/** A value that can be a verification token at all; anything else is refused before any lookup. */
function tokenOf(value: string | undefined): string {
  if (!value?.startsWith(PREFIX.emailVerification) || value.length > 100)
    throw new PageError(400, 'verification_link_invalid');
  return value;
}

/**
 * `/email/verify?token=ev_…`: the GET only shows a confirm button, so a mail
 * scanner opening the link changes nothing; the POST uses the link. No session is needed: the link
 * itself is the proof of the address.
 */
export const emailVerifyRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    EMAIL_VERIFY_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'E-mail verification page: names the address and the account, and a button that confirms it; opening it uses nothing',
      },
      schema: { querystring: verifyQuery },
    },
    async (request, reply) => {
      const token = tokenOf(request.query.token);
      // The page names the address and the account the button confirms it for: one click must
      // never vouch for an account its reader did not make. Reading the link uses nothing.
      const account = await findEmailLinkAccount(db, ctx, token);
      if (!account) throw new PageError(400, 'verification_link_invalid');
      return renderPage(reply, 'verify', {
        csrfToken: issueCsrfToken(request, reply, ctx),
        token,
        ...account,
      });
    },
  );

  routes.post(
    EMAIL_VERIFY_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Use an e-mail link’s token (form POST, CSRF token; 24 h, single use): verifies the address, or makes a new one the account’s',
        csrf: true,
        rateLimit: 'signin',
        switchBase: () => '/account',
      },
      schema: { body: verifyBody },
    },
    async (request, reply) => {
      const token = tokenOf(request.body.token);
      // A change link tells the old address in the language of this page (the link's `lang`).
      const verified = await verifyEmail(db, ctx, { token, ip: request.ip, locale: pageLocale(request) });
      if (!verified) throw new PageError(400, 'verification_link_invalid');
      return renderPage(reply, 'verified', { ...verified });
    },
  );
};
