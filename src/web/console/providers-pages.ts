import type { FastifyReply } from 'fastify';
import type { Deps } from '../../context.js';
import { UPSTREAM_KINDS } from '../../modules/upstream/provider-settings.js';
import { findProviderByName } from '../../modules/upstream/providers.repository.js';
import { listProviderViews, type ProviderView } from '../../modules/upstream/providers.service.js';
import { pageLocale } from '../pages.js';
import { renderConsolePage } from './console-pages.js';
import { consoleTexts } from './i18n/index.js';
import {
  NEW_PROVIDER_VALUES,
  type ProviderFormValues,
  providerProblems,
  type ShownProvider,
  valuesFromProvider,
} from './providers-forms.js';

export const PROVIDERS_PATH = '/admin/providers';

/** A provider's console page. */
export const providerPath = (name: string) => `${PROVIDERS_PATH}/${encodeURIComponent(name)}`;

/** Problems of a form by field (the service's input names). */
export type FieldErrors = Readonly<Record<string, string>>;

const texts = (reply: FastifyReply) => consoleTexts(pageLocale(reply.request, reply)).providers;

/** A provider as its page shows it, with its linked accounts; undefined when none has the name. */
export async function findShownProvider(deps: Deps, name: string): Promise<ShownProvider | undefined> {
  const provider = await findProviderByName(deps.db, name);
  if (!provider) return undefined;
  const view = (await listProviderViews(deps.db, deps.ctx)).find((each) => each.name === provider.name);
  if (!view) return undefined;
  // Never the sealed secret or key: Apple's two ids are all the page adds to what operators see.
  return { ...view, apple_team_id: provider.appleTeamId, apple_key_id: provider.appleKeyId };
}

/** The form's common data: the kinds to choose from and the values and problems of each field. */
function formData(reply: FastifyReply, values: ProviderFormValues, errors: FieldErrors) {
  return {
    values,
    errors: providerProblems(errors, pageLocale(reply.request, reply)),
    kinds: UPSTREAM_KINDS,
  };
}

/** The list of providers, and the form that adds one (with the values and problems of a refused add). */
export async function renderProviderList(
  reply: FastifyReply,
  deps: Deps,
  page: {
    values?: ProviderFormValues;
    errors?: FieldErrors;
    status?: number;
    /** After a removal: how many accounts lost their link. */
    removedLinks?: number;
  } = {},
): Promise<FastifyReply> {
  const providers: ProviderView[] = await listProviderViews(deps.db, deps.ctx);
  return renderConsolePage(
    reply,
    deps,
    'console/providers',
    {
      title: texts(reply).title,
      area: 'providers',
      providers,
      removedLinks: page.removedLinks,
      ...formData(reply, page.values ?? NEW_PROVIDER_VALUES, page.errors ?? {}),
    },
    { status: page.status, switchBase: PROVIDERS_PATH },
  );
}

/** A provider's page: its settings, the edit form (values and problems of a refused edit), enabling and removal. */
export function renderProvider(
  reply: FastifyReply,
  deps: Deps,
  page: {
    provider: ShownProvider;
    values?: ProviderFormValues;
    errors?: FieldErrors;
    done?: string;
    status?: number;
  },
): FastifyReply {
  return renderConsolePage(
    reply,
    deps,
    'console/providers-show',
    {
      title: page.provider.display_name,
      area: 'providers',
      provider: page.provider,
      done: page.done,
      ...formData(reply, page.values ?? valuesFromProvider(page.provider), page.errors ?? {}),
    },
    { status: page.status, switchBase: providerPath(page.provider.name) },
  );
}
