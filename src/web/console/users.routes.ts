import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { userDetail } from '../../modules/user-admin/user-detail.service.js';
import { searchUsersForConsole } from '../../modules/user-admin/user-search.service.js';
import { text } from '../page-forms.js';
import { PageError } from '../pages.js';
import { consoleUserActionRoutes } from './users-actions.routes.js';
import { renderUser, renderUserList, USER_DONE, USERS_PATH, userIdOf, userParams } from './users-pages.js';

/** `?q=` and `?page=`: a page that is not a number is the first (the service bounds the rest). */
const listQuery = z.object({ q: text, page: text });
const showQuery = z.object({ done: text });

/**
 * The console's users: the search and its results, and each user's page (profile, second factors,
 * sessions, devices, apps, premium, wallet, events, and the action forms). The actions are the POST
 * routes of users-actions.routes.ts. Reading needs `view`.
 */
export const consoleUsersRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    USERS_PATH,
    {
      config: {
        auth: 'browser',
        description:
          'Console: find users by username, display name, e-mail or id (?q=, ?page=); the newest without a term',
        console: { can: 'view' },
      },
      schema: { querystring: listQuery },
    },
    async (request, reply) => {
      const page = /^\d{1,6}$/.test(request.query.page ?? '') ? Number(request.query.page) : 1;
      const found = await searchUsersForConsole(deps.db, { q: request.query.q, page });
      return renderUserList(reply, deps, found);
    },
  );

  routes.get(
    `${USERS_PATH}/:id`,
    {
      config: {
        auth: 'browser',
        description:
          "Console: a user's profile, second factors, sessions, devices, apps, premium, wallet and events, and the action forms",
        console: { can: 'view' },
      },
      schema: { params: userParams, querystring: showQuery },
    },
    async (request, reply) => {
      const detail = await userDetail(deps.db, deps.ctx, userIdOf(request.params.id));
      if (!detail) throw new PageError(404, 'not_found');
      const done = USER_DONE.find((key) => key === request.query.done);
      return renderUser(reply, deps, { detail, done });
    },
  );

  await app.register(consoleUserActionRoutes, deps);
};
