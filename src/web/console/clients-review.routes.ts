import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import type { ClientAudit } from '../../modules/clients/client-input.js';
import { approveClient, grantWallet } from '../../modules/developer-apps/app-review.service.js';
import { operatorAuditEvent } from '../../modules/operators/operator-audit.js';
import { formBody, text } from '../page-forms.js';
import { CLIENTS_PATH, clientPath } from './clients-pages.js';
import { operatorActor } from './console-guard.js';

const clientParams = z.object({ id: z.string().max(200) });
const reviewForm = formBody({ csrf_token: text });

/** As every change of an application: an owner's (`clients`), after a recent second-factor proof. */
const CHANGE = { can: 'clients', destructive: true } as const;

const backToClient = (request: FastifyRequest) => clientPath((request.params as { id: string }).id);

/**
 * What operators decide about applications that site owners registered (CLIENT_REGISTRATION):
 * approving one, and granting the wallet right its owners asked for. Audited as the operator in
 * the change's transaction and mailed to the owners.
 */
export const consoleClientReviewRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const auditBy =
    (request: FastifyRequest): ClientAudit =>
    (event) =>
      operatorAuditEvent(operatorActor(request), ctx.clock.now(), event);

  for (const [action, decide, done, description] of [
    [
      'approve',
      approveClient,
      'approved',
      'Console: approve an application its owners registered (form POST)',
    ],
    [
      'grant-wallet',
      grantWallet,
      'wallet_granted',
      'Console: grant an application the wallet right its owners asked for (form POST)',
    ],
  ] as const) {
    routes.post(
      `${CLIENTS_PATH}/:id/${action}`,
      {
        config: {
          auth: 'browser',
          description,
          csrf: true,
          rateLimit: 'signin',
          console: CHANGE,
          switchBase: backToClient,
        },
        schema: { params: clientParams, body: reviewForm },
      },
      async (request, reply) => {
        // An unknown or deleted client is a NotFound: the console's 404 page.
        await decide(db, ctx, request.params.id, { audit: auditBy(request) });
        return reply.redirect(`${clientPath(request.params.id)}?done=${done}`, 303);
      },
    );
  }
};
