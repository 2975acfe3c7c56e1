import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { ClientInputError } from '../../modules/clients/client-input.js';
import { OwnerOnly } from '../../modules/developer-apps/app-changes.js';
import {
  deleteOwnedApp,
  findOwnedApp,
  requestWallet,
  updateOwnedApp,
} from '../../modules/developer-apps/apps.service.js';
import { formBody, text } from '../page-forms.js';
import { PageError } from '../pages.js';
import { appForm, appUpdateInput, appValuesFromForm } from './app-forms.js';
import { APP_DONE, renderAppPage } from './app-page.js';
import { appSecretRoutes } from './app-secrets.routes.js';
import { requiredDeveloper } from './developers-guard.js';
import { APPS_PATH, appParams, appPath, appPost, DEVELOPERS_PATH } from './paths.js';

const showQuery = z.object({ done: text });
const plainForm = formBody({ csrf_token: text });
const deleteForm = formBody({ csrf_token: text, confirm_name: text });

/**
 * An application's page in the portal and its settings, wallet request and deletion; secrets and
 * co-owners are app-secrets.routes.ts. An application the account neither owns nor co-owns is a
 * 404, never a 403: the page does not say that it exists.
 */
export const appRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const owned = async (request: FastifyRequest, clientId: string) => {
    const found = await findOwnedApp(db, requiredDeveloper(request).userId, clientId);
    if (!found) throw new PageError(404, 'not_found');
    return found;
  };

  routes.get(
    `${APPS_PATH}/:client_id`,
    {
      config: {
        auth: 'browser',
        description:
          "Developer portal: an application's status, settings, secrets, owners and activity, and the forms that change them",
      },
      schema: { params: appParams, querystring: showQuery },
    },
    async (request, reply) => {
      const found = await owned(request, request.params.client_id);
      const done = APP_DONE.find((key) => key === request.query.done);
      return renderAppPage(reply, deps, found, { done });
    },
  );

  routes.post(
    `${APPS_PATH}/:client_id`,
    {
      config: appPost("Developer portal: change an application's settings (form POST)"),
      schema: { params: appParams, body: appForm },
    },
    async (request, reply) => {
      const found = await owned(request, request.params.client_id);
      const { userId } = requiredDeveloper(request);
      try {
        const input = appUpdateInput(request.body, found.client);
        const after = await updateOwnedApp(db, ctx, userId, found.client.client_id, input, {
          ip: request.ip,
        });
        const done = JSON.stringify(after) === JSON.stringify(found.client) ? 'unchanged' : 'updated';
        return reply.redirect(`${appPath(found.client.client_id)}?done=${done}`, 303);
      } catch (error) {
        if (!(error instanceof ClientInputError)) throw error;
        const values = appValuesFromForm(request.body);
        return renderAppPage(reply, deps, found, { values, errors: error.fields, status: 400 });
      }
    },
  );

  routes.post(
    `${APPS_PATH}/:client_id/wallet`,
    {
      config: appPost('Developer portal: ask the operators for the wallet right (form POST)'),
      schema: { params: appParams, body: plainForm },
    },
    async (request, reply) => {
      const found = await owned(request, request.params.client_id);
      try {
        await requestWallet(db, ctx, requiredDeveloper(request).userId, found.client.client_id, {
          ip: request.ip,
        });
      } catch (error) {
        if (!(error instanceof ClientInputError)) throw error;
        return renderAppPage(reply, deps, found, { errors: error.fields, status: 400 });
      }
      return reply.redirect(`${appPath(found.client.client_id)}?done=wallet_requested`, 303);
    },
  );

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    routes.post(
      `${APPS_PATH}/:client_id/${action}`,
      {
        config: appPost(
          disabled
            ? 'Developer portal: disable an application, ending its tokens and codes at once (form POST)'
            : 'Developer portal: enable a disabled application again (form POST)',
          { revokes: disabled },
        ),
        schema: { params: appParams, body: plainForm },
      },
      async (request, reply) => {
        const found = await owned(request, request.params.client_id);
        await updateOwnedApp(
          db,
          ctx,
          requiredDeveloper(request).userId,
          found.client.client_id,
          { disabled },
          {
            ip: request.ip,
          },
        );
        return reply.redirect(
          `${appPath(found.client.client_id)}?done=${disabled ? 'disabled' : 'enabled'}`,
          303,
        );
      },
    );
  }

  routes.post(
    `${APPS_PATH}/:client_id/delete`,
    {
      config: appPost(
        'Developer portal: delete an application for good, its name typed to confirm (form POST, recent re-authentication)',
        { reauth: 'required', revokes: true },
      ),
      schema: { params: appParams, body: deleteForm },
    },
    async (request, reply) => {
      const found = await owned(request, request.params.client_id);
      if ((request.body.confirm_name ?? '').trim() !== found.client.name)
        return renderAppPage(reply, deps, found, { deleteProblem: 'wrong_name', status: 400 });
      try {
        await deleteOwnedApp(db, ctx, requiredDeveloper(request).userId, found.client.client_id, {
          ip: request.ip,
        });
      } catch (error) {
        if (!(error instanceof OwnerOnly)) throw error;
        return renderAppPage(reply, deps, found, { deleteProblem: 'owner_only', status: 403 });
      }
      return reply.redirect(`${DEVELOPERS_PATH}?done=deleted`, 303);
    },
  );

  await app.register(appSecretRoutes, deps);
};
