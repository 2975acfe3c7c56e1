import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { ApiError } from '../../lib/errors.js';
import type { ClientAudit } from '../../modules/clients/client-input.js';
import {
  ClientInputError,
  createClient,
  findClientDetails,
  rotateClientSecret,
  updateClient,
} from '../../modules/clients/clients.service.js';
import { operatorAuditEvent } from '../../modules/operators/operator-audit.js';
import { formBody, text } from '../page-forms.js';
import { PageError } from '../pages.js';
import { clientForm, createInput, updateInput, valuesFromForm } from './clients-forms.js';
import {
  CLIENTS_PATH,
  clientPath,
  NEW_CLIENT_PATH,
  renderClient,
  renderNewClient,
  renderSecretShown,
} from './clients-pages.js';
import { operatorActor } from './console-guard.js';

const clientParams = z.object({ id: z.string().max(200) });
const rotateForm = formBody({ csrf_token: text, overlap: text });
const accessForm = formBody({ csrf_token: text });

/** Every change is an owner's (`clients`) and asks for a recent second-factor proof. */
const CHANGE = { can: 'clients', destructive: true } as const;

/** Where a refused POST's language switch and re-authentication return: the application's page. */
const backToClient = (request: FastifyRequest) => clientPath((request.params as { id: string }).id);

/**
 * The console's changes to applications: register, edit, rotate the secret, disable and enable.
 * Each calls the service `idp clients` calls, with the same validation, and records its audit
 * event (the operator, before and after; never a secret) in the change's own transaction.
 */
export const consoleClientActionRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const auditBy =
    (request: FastifyRequest): ClientAudit =>
    (event) =>
      operatorAuditEvent(operatorActor(request), ctx.clock.now(), event);
  const existing = async (clientId: string) => {
    const client = await findClientDetails(db, ctx, clientId);
    if (!client) throw new PageError(404, 'not_found');
    return client;
  };

  routes.post(
    CLIENTS_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Console: register an application (form POST); the answer shows its secret this once',
        csrf: true,
        rateLimit: 'signin',
        console: CHANGE,
        switchBase: () => NEW_CLIENT_PATH,
      },
      schema: { body: clientForm },
    },
    async (request, reply) => {
      try {
        const created = await createClient(db, ctx, createInput(request.body), { audit: auditBy(request) });
        const { client_secret: secret, ...client } = created;
        return renderSecretShown(reply, deps, { kind: 'created', client, secret });
      } catch (error) {
        if (!(error instanceof ClientInputError)) throw error;
        const values = valuesFromForm(request.body);
        return renderNewClient(reply, deps, { values, errors: error.fields, status: 400 });
      }
    },
  );

  routes.post(
    `${CLIENTS_PATH}/:id`,
    {
      config: {
        auth: 'browser',
        description: "Console: change an application's settings (form POST)",
        csrf: true,
        rateLimit: 'signin',
        console: CHANGE,
        switchBase: backToClient,
      },
      schema: { params: clientParams, body: clientForm },
    },
    async (request, reply) => {
      const client = await existing(request.params.id);
      try {
        const input = updateInput(request.body, client);
        const after = await updateClient(db, ctx, client.client_id, input, { audit: auditBy(request) });
        const { previous_secret_expires_at: _until, ...before } = client;
        const done = JSON.stringify(after) === JSON.stringify(before) ? 'unchanged' : 'updated';
        return reply.redirect(`${clientPath(client.client_id)}?done=${done}`, 303);
      } catch (error) {
        if (!(error instanceof ClientInputError)) throw error;
        const values = valuesFromForm(request.body);
        return renderClient(reply, deps, { client, values, errors: error.fields, status: 400 });
      }
    },
  );

  routes.post(
    `${CLIENTS_PATH}/:id/rotate-secret`,
    {
      config: {
        auth: 'browser',
        description:
          "Console: replace an application's secret, the old one kept for the chosen overlap (form POST); the answer shows the new one this once",
        csrf: true,
        rateLimit: 'signin',
        console: CHANGE,
        switchBase: backToClient,
      },
      schema: { params: clientParams, body: rotateForm },
    },
    async (request, reply) => {
      const client = await existing(request.params.id);
      const given = request.body.overlap ?? '0';
      const overlapSeconds = /^\d{1,7}$/.test(given) ? Number(given) : Number.NaN;
      try {
        const rotated = await rotateClientSecret(db, ctx, client.client_id, {
          overlapSeconds,
          audit: auditBy(request),
        });
        const { client_secret: secret, previous_secret_expires_at: oldUntil, ...view } = rotated;
        return renderSecretShown(reply, deps, {
          kind: 'rotated',
          client: view,
          secret,
          oldUntil: oldUntil ?? null,
        });
      } catch (error) {
        if (error instanceof ClientInputError)
          return renderClient(reply, deps, { client, errors: error.fields, status: 400 });
        // A public client has no secret: its page offers no rotation.
        if (error instanceof ApiError && error.status === 400)
          throw new PageError(400, 'bad_request', { detail: error.description });
        throw error;
      }
    },
  );

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    routes.post(
      `${CLIENTS_PATH}/:id/${action}`,
      {
        config: {
          auth: 'browser',
          description: disabled
            ? 'Console: disable an application, ending its tokens and codes at once (form POST)'
            : 'Console: enable an application again (form POST)',
          csrf: true,
          rateLimit: 'signin',
          revokes: disabled,
          console: CHANGE,
          switchBase: backToClient,
        },
        schema: { params: clientParams, body: accessForm },
      },
      async (request, reply) => {
        const client = await existing(request.params.id);
        await updateClient(db, ctx, client.client_id, { disabled }, { audit: auditBy(request) });
        return reply.redirect(
          `${clientPath(client.client_id)}?done=${disabled ? 'disabled' : 'enabled'}`,
          303,
        );
      },
    );
  }
};
