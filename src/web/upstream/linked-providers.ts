import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../context.js';
import { linksOf } from '../../modules/upstream/links.service.js';
import { formatDate } from '../i18n/index.js';
import { pageLocale } from '../pages.js';
import { type ProviderButton, providerButtons } from './provider-buttons.js';

/** The account page's section of links: each link, and a button for each enabled provider not linked yet. */
export interface LinkedProvidersSection {
  links: Array<{
    id: number;
    provider: string;
    kind: string;
    who: string;
    linkedOn: string;
    lastUsed: string | null;
  }>;
  buttons: ProviderButton[];
  formTargets: string[];
}

export async function linkedProvidersSection(
  request: FastifyRequest,
  deps: Deps,
  userId: number,
): Promise<LinkedProvidersSection> {
  const locale = pageLocale(request);
  const links = await linksOf(deps.db, userId);
  const linked = new Set(links.map((link) => link.providerName));
  const { buttons, formTargets } = await providerButtons(
    deps,
    (name) => `/account/providers/${name}/link`,
    (name) => !linked.has(name),
  );
  return {
    links: links.map((link) => ({
      id: link.id,
      provider: link.providerDisplayName,
      kind: link.providerKind,
      who: link.label ?? link.email ?? link.subject,
      linkedOn: formatDate(locale, link.createdAt),
      lastUsed: link.lastUsedAt ? formatDate(locale, link.lastUsedAt) : null,
    })),
    buttons,
    formTargets,
  };
}

/** The re-authentication page's buttons: the providers linked to the account (and enabled). */
export async function reauthProviderButtons(
  deps: Deps,
  userId: number,
): Promise<{ buttons: ProviderButton[]; formTargets: string[] }> {
  const linked = new Set((await linksOf(deps.db, userId)).map((link) => link.providerName));
  return providerButtons(
    deps,
    (name) => `/account/reauthenticate/providers/${name}`,
    (name) => linked.has(name),
  );
}
