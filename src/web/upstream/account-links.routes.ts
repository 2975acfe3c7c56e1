import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { isMultiFactor } from '../../lib/amr.js';
import { NotFound } from '../../lib/errors.js';
import { safeReturnPath } from '../../lib/return-to.js';
import { hasSecondFactor } from '../../modules/sign-in-policy/sign-in-policy.service.js';
import { LastWayToSignIn, unlinkProvider } from '../../modules/upstream/links.service.js';
import { formBody, text } from '../page-forms.js';
import { REAUTHENTICATE_PATH, requiredSession } from '../page-guards.js';
import { pageLocale } from '../pages.js';
import { goToProvider } from './upstream.routes.js';

const providerParams = z.object({ name: z.string().regex(/^[a-z][a-z0-9-]{1,31}$/) });
const linkBody = formBody({ csrf_token: text });
const unlinkBody = formBody({
  csrf_token: text,
  link: z.coerce.number().int().positive().optional().catch(undefined),
});
const reauthBody = formBody({ csrf_token: text, return_to: text });

const SECTION = '/account/security';

/**
 * The account's links to providers (`/account/security`, "Other accounts you sign in with"): link
 * another, unlink one (never the last way in), and re-authenticate through a linked provider (the
 * only proof an account without a password has). Linking and unlinking change how the account signs
 * in: recent re-authentication, as for second factors and passkeys.
 */
export const accountLinksRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const post = (description: string, extra: { reauth?: 'required' } = {}) => ({
    auth: 'browser' as const,
    description,
    csrf: true,
    rateLimit: 'signin' as const,
    session: 'required' as const,
    switchBase: () => SECTION,
    ...extra,
  });

  routes.post(
    '/account/providers/:name/link',
    {
      config: post(
        'Link another provider to the account (form POST, recent re-authentication): redirects to it',
        {
          reauth: 'required',
        },
      ),
      schema: { params: providerParams, body: linkBody },
    },
    async (request, reply) => {
      const session = requiredSession(request);
      // A new way in needs the account's whole proof: its second factor too (as linking after a
      // first sign-in does, continue.routes.ts).
      if (!isMultiFactor(session.amr) && (await hasSecondFactor(deps.db, session.userId)))
        return reply.redirect(
          `/signin/second-factor?return_to=${encodeURIComponent(`${SECTION}#providers`)}`,
          303,
        );
      return goToProvider(request, reply, deps, {
        provider: request.params.name,
        purpose: 'link',
        userId: session.userId,
        flow: {},
      });
    },
  );

  routes.post(
    '/account/providers/unlink',
    {
      config: post('Unlink a provider from the account, unless it is the last way to sign in (form POST)', {
        reauth: 'required',
      }),
      schema: { body: unlinkBody },
    },
    async (request, reply) => {
      try {
        if (request.body.link === undefined) throw new NotFound('no such link');
        await unlinkProvider(deps.db, deps.ctx, {
          userId: requiredSession(request).userId,
          linkId: request.body.link,
          ip: request.ip,
          locale: pageLocale(request),
        });
        return reply.redirect(`${SECTION}?providers=unlinked#providers`, 303);
      } catch (error) {
        if (error instanceof LastWayToSignIn)
          return reply.redirect(`${SECTION}?providers=last_way#providers`, 303);
        if (error instanceof NotFound) return reply.redirect(`${SECTION}#providers`, 303);
        throw error;
      }
    },
  );

  routes.post(
    `${REAUTHENTICATE_PATH}/providers/:name`,
    {
      config: {
        ...post('Confirm it is you through a linked provider (form POST): redirects to it'),
        switchBase: undefined,
      },
      schema: { params: providerParams, body: reauthBody },
    },
    async (request, reply) =>
      goToProvider(request, reply, deps, {
        provider: request.params.name,
        purpose: 'reauth',
        userId: requiredSession(request).userId,
        flow: { returnTo: safeReturnPath(request.body.return_to) ?? undefined },
      }),
  );
};
