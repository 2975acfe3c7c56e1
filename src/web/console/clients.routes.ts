import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { findClientDetails, searchClients } from '../../modules/clients/clients.service.js';
import { listClientsAwaitingApproval } from '../../modules/developer-apps/app-review.service.js';
import { text } from '../page-forms.js';
import { PageError } from '../pages.js';
import { consoleClientActionRoutes } from './clients-actions.routes.js';
import { valuesFromForm } from './clients-forms.js';
import {
  CLIENTS_PATH,
  NEW_CLIENT_PATH,
  renderClient,
  renderClientList,
  renderNewClient,
} from './clients-pages.js';
import { consoleClientReviewRoutes } from './clients-review.routes.js';

/** The statuses a change redirects back with (`?done=`): anything else shows none. */
const DONE = ['updated', 'disabled', 'enabled', 'unchanged', 'approved', 'wallet_granted'] as const;

const listQuery = z.object({ q: text, pending: text, deleted: text });
const clientParams = z.object({ id: z.string().max(200) });
const showQuery = z.object({ done: text });

/**
 * The console's applications: the list and its search, the registration form, and each
 * application's page (settings, usage, the edit, rotation and access forms). Changes are the
 * POST routes of clients-actions.routes.ts. Reading needs `view`; every change `clients`.
 */
export const consoleClientsRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    CLIENTS_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Console: the applications, searched by name or client_id (?q=)',
        console: { can: 'view' },
      },
      schema: { querystring: listQuery },
    },
    async (request, reply) => {
      const query = (request.query.q ?? '').trim().slice(0, 200);
      // ?pending=1: the applications no operator approved yet (CLIENT_REGISTRATION).
      if (request.query.pending === '1')
        return renderClientList(reply, deps, {
          query,
          clients: await listClientsAwaitingApproval(deps.db),
          pending: true,
        });
      // Deleted applications are gone for their owners: listed only when asked for (?deleted=1).
      const deleted = request.query.deleted === '1';
      const clients = await searchClients(deps.db, query, { deleted });
      return renderClientList(reply, deps, { query, clients, deleted });
    },
  );

  routes.get(
    NEW_CLIENT_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Console: the form that registers an application',
        console: { can: 'clients' },
      },
    },
    async (_request, reply) =>
      renderNewClient(reply, deps, { values: valuesFromForm({ id_token_alg: 'RS256' }) }),
  );

  routes.get(
    `${CLIENTS_PATH}/:id`,
    {
      config: {
        auth: 'browser',
        description: "Console: an application's settings, usage and the forms that change them",
        console: { can: 'view' },
      },
      schema: { params: clientParams, querystring: showQuery },
    },
    async (request, reply) => {
      const client = await findClientDetails(deps.db, deps.ctx, request.params.id);
      if (!client) throw new PageError(404, 'not_found');
      const done = DONE.find((key) => key === request.query.done);
      return renderClient(reply, deps, { client, done });
    },
  );

  await app.register(consoleClientActionRoutes, deps);
  await app.register(consoleClientReviewRoutes, deps);
};
