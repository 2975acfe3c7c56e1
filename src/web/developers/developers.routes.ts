import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { SIGNING_ALGORITHMS } from '../../lib/signing-algorithms.js';
import { ClientInputError } from '../../modules/clients/client-input.js';
import { AppLimitReached, RegistrationClosed, userActor } from '../../modules/developer-apps/app-changes.js';
import { createOwnedApp, listOwnedApps } from '../../modules/developer-apps/apps.service.js';
import {
  createRegistrationToken,
  listRegistrationTokens,
  revokeRegistrationToken,
} from '../../modules/developer-apps/registration-tokens.service.js';
import { shownProblems } from '../client-problems.js';
import type { ClientFormValues } from '../console/clients-forms.js';
import { formBody, text } from '../page-forms.js';
import { PageError, pageLocale } from '../pages.js';
import { appRoutes } from './app.routes.js';
import { appCreateInput, appForm, appValuesFromForm } from './app-forms.js';
import { developersAssetRoutes } from './assets.js';
import { developersGuard, requiredDeveloper } from './developers-guard.js';
import { appStatus, renderDevelopersPage } from './developers-pages.js';
import { developersTexts } from './i18n/index.js';
import { APPS_PATH, DEVELOPERS_PATH, NEW_APP_PATH, TOKENS_PATH } from './paths.js';

/** The statuses a change redirects back to the list with (`?done=`): anything else shows none. */
const LIST_DONE = ['token_revoked', 'deleted', 'left'] as const;
/** The expiries the token form offers, in seconds (the service takes 60 s to 90 days). */
export const TOKEN_EXPIRIES = ['86400', '604800', '2592000', '7776000'] as const;

const listQuery = z.object({ done: text });
const tokenForm = formBody({ csrf_token: text, uses: text, expires_in: text });
const revokeForm = formBody({ csrf_token: text, token_id: text });

const whole = (value: string | undefined, fallback: number) =>
  value === undefined || value === '' ? fallback : /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;

/**
 * The developer portal (`/developers`): the account's applications, creating one (its secret shown
 * once), and the account's RFC 7591 initial access tokens; each application's page is
 * app.routes.ts. Every route is behind developersGuard: signed in, e-mail address confirmed. Every
 * change goes through the services the CLI and the registration endpoint use (same validation,
 * audit, owners' mail, limits).
 */
export const developersRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  await app.register(developersAssetRoutes);
  app.addHook('preHandler', async (request, reply) => {
    // The assets are public; every page and form of the portal is the signed-in account's.
    if (request.routeOptions.config.staticAsset) return;
    return developersGuard(deps)(request, reply);
  });
  const closed = () => ctx.config.CLIENT_REGISTRATION === 'closed';
  const formData = (reply: FastifyReply, values: ClientFormValues, errors: Record<string, string>) => ({
    values,
    errors: shownProblems(errors, pageLocale(reply.request, reply)),
    algorithms: SIGNING_ALGORITHMS,
  });

  const renderList = async (
    request: FastifyRequest,
    reply: FastifyReply,
    page: { done?: string; tokenErrors?: Record<string, string>; status?: number } = {},
  ) => {
    const { userId } = requiredDeveloper(request);
    const apps = await listOwnedApps(db, userId);
    const tokens = await listRegistrationTokens(db, ctx, userId);
    return renderDevelopersPage(
      reply,
      deps,
      'developers/index',
      {
        title: developersTexts(pageLocale(request, reply)).title,
        closed: closed(),
        done: page.done,
        apps: apps.map(({ client, role }) => ({
          client,
          role,
          status: appStatus(client, ctx.config.CLIENT_REGISTRATION),
        })),
        tokens,
        tokenErrors: shownProblems(page.tokenErrors ?? {}, pageLocale(request, reply)),
        tokenExpiries: TOKEN_EXPIRIES,
        registrationEndpoint: `${ctx.config.PUBLIC_URL}/api/v1/oauth/register`,
      },
      { status: page.status, switchBase: DEVELOPERS_PATH },
    );
  };

  const renderNew = (
    reply: FastifyReply,
    page: { values: ClientFormValues; errors?: Record<string, string>; status?: number },
  ) =>
    renderDevelopersPage(
      reply,
      deps,
      'developers/new',
      {
        title: developersTexts(pageLocale(reply.request, reply)).newTitle,
        closed: closed(),
        ...formData(reply, page.values, page.errors ?? {}),
      },
      { status: page.status ?? (closed() ? 403 : undefined), switchBase: NEW_APP_PATH },
    );

  routes.get(
    DEVELOPERS_PATH,
    {
      config: {
        auth: 'browser',
        description: "Developer portal: the account's applications and registration tokens",
      },
      schema: { querystring: listQuery },
    },
    async (request, reply) =>
      renderList(request, reply, { done: LIST_DONE.find((key) => key === request.query.done) }),
  );

  routes.get(
    NEW_APP_PATH,
    { config: { auth: 'browser', description: 'Developer portal: the form that creates an application' } },
    async (_request, reply) => renderNew(reply, { values: appValuesFromForm({ id_token_alg: 'RS256' }) }),
  );

  routes.post(
    APPS_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Developer portal: create an application (form POST); the answer shows its secret this once',
        csrf: true,
        rateLimit: 'signin',
        switchBase: () => NEW_APP_PATH,
      },
      schema: { body: appForm },
    },
    async (request, reply) => {
      const { userId } = requiredDeveloper(request);
      const values = appValuesFromForm(request.body);
      try {
        const created = await createOwnedApp(db, ctx, {
          ownerUserId: userId,
          input: appCreateInput(request.body),
          via: 'portal',
          ip: request.ip,
        });
        const { client_secret: secret, ...client } = created;
        const d = developersTexts(pageLocale(request, reply));
        return renderDevelopersPage(
          reply,
          deps,
          'developers/created',
          {
            title: d.createdTitle,
            client,
            secret,
            status: appStatus(client, ctx.config.CLIENT_REGISTRATION),
            discovery: `${ctx.config.PUBLIC_URL}/.well-known/openid-configuration`,
          },
          { status: 201, switchBase: DEVELOPERS_PATH },
        );
      } catch (error) {
        if (error instanceof RegistrationClosed) return renderNew(reply, { values, status: 403 });
        if (error instanceof AppLimitReached)
          return renderNew(reply, { values, errors: { form: error.description }, status: 403 });
        if (!(error instanceof ClientInputError)) throw error;
        return renderNew(reply, { values, errors: error.fields, status: 400 });
      }
    },
  );

  routes.post(
    TOKENS_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Developer portal: create an RFC 7591 initial access token (form POST); the answer shows it this once',
        csrf: true,
        rateLimit: 'signin',
        switchBase: () => DEVELOPERS_PATH,
      },
      schema: { body: tokenForm },
    },
    async (request, reply) => {
      const { userId } = requiredDeveloper(request);
      try {
        const made = await createRegistrationToken(db, ctx, {
          ownerUserId: userId,
          createdBy: userActor(userId),
          uses: whole(request.body.uses, 1),
          expiresInSeconds: whole(request.body.expires_in, Number(TOKEN_EXPIRIES[1])),
          ip: request.ip,
        });
        const d = developersTexts(pageLocale(request, reply));
        return renderDevelopersPage(
          reply,
          deps,
          'developers/token',
          {
            title: d.tokenShownTitle,
            made,
            registrationEndpoint: `${ctx.config.PUBLIC_URL}/api/v1/oauth/register`,
          },
          { status: 201, switchBase: DEVELOPERS_PATH },
        );
      } catch (error) {
        if (error instanceof RegistrationClosed)
          throw new PageError(403, 'forbidden', { detail: error.description });
        if (!(error instanceof ClientInputError)) throw error;
        return renderList(request, reply, { tokenErrors: error.fields, status: 400 });
      }
    },
  );

  routes.post(
    `${TOKENS_PATH}/revoke`,
    {
      config: {
        auth: 'browser',
        description: 'Developer portal: revoke one of the account’s registration tokens (form POST)',
        csrf: true,
        rateLimit: 'signin',
        switchBase: () => DEVELOPERS_PATH,
      },
      schema: { body: revokeForm },
    },
    async (request, reply) => {
      const { userId } = requiredDeveloper(request);
      const id = whole(request.body.token_id, Number.NaN);
      await revokeRegistrationToken(db, ctx, userId, id, { ip: request.ip });
      return reply.redirect(`${DEVELOPERS_PATH}?done=token_revoked`, 303);
    },
  );

  await app.register(appRoutes, deps);
};
