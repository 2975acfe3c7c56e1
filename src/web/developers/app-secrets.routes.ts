import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../context.js';
import { ClientInputError } from '../../modules/clients/client-input.js';
import { addCoOwner, findOwnedApp, removeCoOwner } from '../../modules/developer-apps/apps.service.js';
import { formBody, text } from '../page-forms.js';
import { PageError } from '../pages.js';
import { ADD_SECRET_EXPIRIES, EXPIRE_CHOICES, renderAppPage } from './app-page.js';
import { addOwnedSecret, expireOwnedSecret } from './app-secret-changes.js';
import { requiredDeveloper } from './developers-guard.js';
import { APPS_PATH, appParams, appPath, appPost, DEVELOPERS_PATH } from './paths.js';

const addSecretForm = formBody({ csrf_token: text, expires_in: text });
const expireForm = formBody({ csrf_token: text, secret_id: text, in: text });
const addOwnerForm = formBody({ csrf_token: text, username: text });
const removeOwnerForm = formBody({ csrf_token: text, user_id: text });

const wholeId = (value: string | undefined) => (/^\d{1,15}$/.test(value ?? '') ? Number(value) : Number.NaN);

/**
 * The secrets and co-owners of an application in the portal. Adding a secret beside the others,
 * then expiring the old one once the site uses the new one, rotates without downtime. Adding a
 * secret, expiring one and removing a co-owner need a recent re-authentication (they decide who
 * and what may act as the application).
 */
export const appSecretRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const owned = async (request: FastifyRequest, clientId: string) => {
    const found = await findOwnedApp(db, requiredDeveloper(request).userId, clientId);
    if (!found) throw new PageError(404, 'not_found');
    return found;
  };
  routes.post(
    `${APPS_PATH}/:client_id/secrets`,
    {
      config: appPost(
        'Developer portal: add a client secret beside the others, with an optional expiry (form POST, recent re-authentication); the answer shows it this once',
        { reauth: 'required' },
      ),
      schema: { params: appParams, body: addSecretForm },
    },
    async (request, reply) => {
      const found = await owned(request, request.params.client_id);
      const { userId } = requiredDeveloper(request);
      const choice = ADD_SECRET_EXPIRIES.find((each) => each === (request.body.expires_in ?? ''));
      if (choice === undefined)
        return renderAppPage(reply, deps, found, {
          errors: { expiresAt: 'the expiry must be a valid time' },
          status: 400,
        });
      const now = ctx.clock.now().getTime();
      try {
        const added = await addOwnedSecret(
          deps,
          { userId, ip: request.ip },
          found.client.client_id,
          choice === '' ? null : new Date(now + Number(choice) * 1000),
        );
        return renderAppPage(reply, deps, found, { secretAdded: added, status: 201 });
      } catch (error) {
        if (!(error instanceof ClientInputError)) throw error;
        return renderAppPage(reply, deps, found, { errors: error.fields, status: 400 });
      }
    },
  );

  routes.post(
    `${APPS_PATH}/:client_id/secrets/expire`,
    {
      config: appPost(
        'Developer portal: make a client secret stop working now or in an hour, a day or 7 days (form POST, recent re-authentication)',
        { reauth: 'required', revokes: true },
      ),
      schema: { params: appParams, body: expireForm },
    },
    async (request, reply) => {
      const found = await owned(request, request.params.client_id);
      const { userId } = requiredDeveloper(request);
      const delay = EXPIRE_CHOICES.find((each) => each === (request.body.in ?? '0'));
      const secretId = wholeId(request.body.secret_id);
      if (delay === undefined || Number.isNaN(secretId))
        throw new PageError(400, 'bad_request', { detail: 'secret_id and in (0, 3600, 86400 or 604800)' });
      try {
        await expireOwnedSecret(
          deps,
          { userId, ip: request.ip },
          found.client.client_id,
          secretId,
          new Date(ctx.clock.now().getTime() + Number(delay) * 1000),
        );
      } catch (error) {
        if (!(error instanceof ClientInputError)) throw error;
        return renderAppPage(reply, deps, found, { errors: error.fields, status: 400 });
      }
      return reply.redirect(`${appPath(found.client.client_id)}?done=secret_expired`, 303);
    },
  );

  routes.post(
    `${APPS_PATH}/:client_id/owners`,
    {
      config: appPost('Developer portal: add a co-owner by username (form POST)'),
      schema: { params: appParams, body: addOwnerForm },
    },
    async (request, reply) => {
      const found = await owned(request, request.params.client_id);
      const username = (request.body.username ?? '').slice(0, 100);
      try {
        await addCoOwner(db, ctx, requiredDeveloper(request).userId, found.client.client_id, username, {
          ip: request.ip,
        });
      } catch (error) {
        if (!(error instanceof ClientInputError)) throw error;
        return renderAppPage(reply, deps, found, { errors: error.fields, username, status: 400 });
      }
      return reply.redirect(`${appPath(found.client.client_id)}?done=owner_added`, 303);
    },
  );

  routes.post(
    `${APPS_PATH}/:client_id/owners/remove`,
    {
      config: appPost(
        'Developer portal: remove a co-owner, or leave as one (form POST, recent re-authentication)',
        { reauth: 'required' },
      ),
      schema: { params: appParams, body: removeOwnerForm },
    },
    async (request, reply) => {
      const found = await owned(request, request.params.client_id);
      const { userId } = requiredDeveloper(request);
      const removed = wholeId(request.body.user_id);
      if (Number.isNaN(removed))
        throw new PageError(400, 'bad_request', { detail: 'user_id must be a number' });
      try {
        await removeCoOwner(db, ctx, userId, found.client.client_id, removed, { ip: request.ip });
      } catch (error) {
        if (!(error instanceof ClientInputError)) throw error;
        return renderAppPage(reply, deps, found, { errors: error.fields, status: 400 });
      }
      // Having left it, the account no longer sees the application.
      if (removed === userId) return reply.redirect(`${DEVELOPERS_PATH}?done=left`, 303);
      return reply.redirect(`${appPath(found.client.client_id)}?done=owner_removed`, 303);
    },
  );
};
