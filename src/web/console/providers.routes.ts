import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { InvalidRequest } from '../../lib/errors.js';
import { ClientInputError } from '../../modules/clients/client-input.js';
import { addProvider, changeProvider, removeProvider } from '../../modules/upstream/providers.service.js';
import { formBody, text } from '../page-forms.js';
import { PageError } from '../pages.js';
import { operatorActor } from './console-guard.js';
import { addInput, changeInput, changesSomething, providerForm, valuesFromForm } from './providers-forms.js';
import {
  findShownProvider,
  PROVIDERS_PATH,
  providerPath,
  renderProvider,
  renderProviderList,
} from './providers-pages.js';

/** The statuses a change redirects back with (`?done=`): anything else shows none. */
const DONE = ['added', 'updated', 'unchanged', 'disabled', 'enabled'] as const;

const providerParams = z.object({ name: z.string().max(100) });
const showQuery = z.object({ done: text });
const listQuery = z.object({ removed: text });
const accessForm = formBody({ csrf_token: text });
const removeForm = formBody({ csrf_token: text, confirm: text });

/** Every change is the role's that manages applications (`clients`), with a recent second-factor proof. */
const CHANGE = { can: 'clients', destructive: true } as const;

/** Where a refused POST's language switch and re-authentication return: the provider's page. */
const backToProvider = (request: FastifyRequest) => providerPath((request.params as { name: string }).name);

/**
 * The console's sign-in providers: the list with the form that adds one, each provider's page with
 * the forms that change, enable, disable and remove it. Each change calls the service `idp
 * providers` calls, with the same validation; the service records its audit event (never a secret)
 * with the operator's account as the actor. Reading needs `view`.
 */
export const consoleProvidersRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const existing = async (name: string) => {
    const provider = await findShownProvider(deps, name);
    if (!provider) throw new PageError(404, 'not_found');
    return provider;
  };

  routes.get(
    PROVIDERS_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Console: the sign-in providers with their callback URLs, and the form that adds one',
        console: { can: 'view' },
      },
      schema: { querystring: listQuery },
    },
    async (request, reply) => {
      const removed = request.query.removed;
      return renderProviderList(reply, deps, {
        removedLinks: removed && /^\d{1,9}$/.test(removed) ? Number(removed) : undefined,
      });
    },
  );

  routes.post(
    PROVIDERS_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Console: add a sign-in provider (form POST)',
        csrf: true,
        rateLimit: 'signin',
        console: CHANGE,
        switchBase: () => PROVIDERS_PATH,
      },
      schema: { body: providerForm },
    },
    async (request, reply) => {
      try {
        const added = await addProvider(db, ctx, addInput(request.body), operatorActor(request));
        return reply.redirect(`${providerPath(added.name)}?done=added`, 303);
      } catch (error) {
        // A taken name is the service's InvalidRequest, not a field's problem: shown by the name.
        const fields =
          error instanceof ClientInputError
            ? error.fields
            : error instanceof InvalidRequest
              ? { name: error.description }
              : undefined;
        if (!fields) throw error;
        const values = valuesFromForm(request.body);
        return renderProviderList(reply, deps, { values, errors: fields, status: 400 });
      }
    },
  );

  routes.get(
    `${PROVIDERS_PATH}/:name`,
    {
      config: {
        auth: 'browser',
        description: "Console: a sign-in provider's settings and the forms that change and remove it",
        console: { can: 'view' },
      },
      schema: { params: providerParams, querystring: showQuery },
    },
    async (request, reply) => {
      const provider = await existing(request.params.name);
      const done = DONE.find((key) => key === request.query.done);
      return renderProvider(reply, deps, { provider, done });
    },
  );

  routes.post(
    `${PROVIDERS_PATH}/:name`,
    {
      config: {
        auth: 'browser',
        description:
          "Console: change a sign-in provider's settings; a blank secret keeps the stored one (form POST)",
        csrf: true,
        rateLimit: 'signin',
        console: CHANGE,
        switchBase: backToProvider,
      },
      schema: { params: providerParams, body: providerForm },
    },
    async (request, reply) => {
      const provider = await existing(request.params.name);
      const input = changeInput(request.body, provider);
      if (!changesSomething(input))
        return reply.redirect(`${providerPath(provider.name)}?done=unchanged`, 303);
      try {
        await changeProvider(db, ctx, input, operatorActor(request));
        return reply.redirect(`${providerPath(provider.name)}?done=updated`, 303);
      } catch (error) {
        if (!(error instanceof ClientInputError)) throw error;
        const values = { ...valuesFromForm(request.body), enabled: provider.enabled };
        return renderProvider(reply, deps, { provider, values, errors: error.fields, status: 400 });
      }
    },
  );

  for (const [action, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    routes.post(
      `${PROVIDERS_PATH}/:name/${action}`,
      {
        config: {
          auth: 'browser',
          description: enabled
            ? 'Console: enable a sign-in provider again (form POST)'
            : 'Console: disable a sign-in provider, its links kept (form POST)',
          csrf: true,
          rateLimit: 'signin',
          console: CHANGE,
          switchBase: backToProvider,
        },
        schema: { params: providerParams, body: accessForm },
      },
      async (request, reply) => {
        const provider = await existing(request.params.name);
        await changeProvider(db, ctx, { name: provider.name, enabled }, operatorActor(request));
        return reply.redirect(`${providerPath(provider.name)}?done=${action}d`, 303);
      },
    );
  }

  routes.post(
    `${PROVIDERS_PATH}/:name/remove`,
    {
      config: {
        auth: 'browser',
        description:
          "Console: remove a sign-in provider and every account's link to it, its name typed to confirm (form POST: confirm)",
        csrf: true,
        rateLimit: 'signin',
        console: CHANGE,
        switchBase: backToProvider,
      },
      schema: { params: providerParams, body: removeForm },
    },
    async (request, reply) => {
      const provider = await existing(request.params.name);
      if ((request.body.confirm ?? '').trim() !== provider.name) {
        const errors = { confirm: "the name typed does not match the provider's name" };
        return renderProvider(reply, deps, { provider, errors, status: 400 });
      }
      const removed = await removeProvider(db, ctx, provider.name, operatorActor(request));
      return reply.redirect(`${PROVIDERS_PATH}?removed=${removed.links_removed}`, 303);
    },
  );
};
