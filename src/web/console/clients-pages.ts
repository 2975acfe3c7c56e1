import type { FastifyReply } from 'fastify';
import type { Deps } from '../../context.js';
import { SIGNING_ALGORITHMS } from '../../lib/signing-algorithms.js';
import { listClientSecrets } from '../../modules/clients/client-secret.service.js';
import type { ClientView } from '../../modules/clients/clients.schemas.js';
import { findClientReview } from '../../modules/developer-apps/app-review.service.js';
import { shownProblems } from '../client-problems.js';
import { pageLocale } from '../pages.js';
import { chartScriptHrefs, uplotStylesheet } from './chart-assets.js';
import type { ClientFormValues } from './clients-forms.js';
import { valuesFromClient } from './clients-forms.js';
import { usageByDay, usageChartData } from './clients-usage.js';
import { renderConsolePage } from './console-pages.js';
import { consoleTexts } from './i18n/index.js';

export const CLIENTS_PATH = '/admin/clients';
export const NEW_CLIENT_PATH = '/admin/clients/new';

/** A client's console page. */
export const clientPath = (clientId: string) => `${CLIENTS_PATH}/${encodeURIComponent(clientId)}`;

/** The overlaps the rotation form offers, in seconds (the CLI takes any from 0 to 7 days). */
export const OVERLAP_CHOICES = ['0', '3600', '86400', '604800'] as const;

/** Problems of the form by field (the service's input names); `form` for the whole. */
export type FieldErrors = Readonly<Record<string, string>>;

const texts = (reply: FastifyReply) => consoleTexts(pageLocale(reply.request, reply)).clients;

/**
 * When a replaced secret stops working, to the minute and in UTC (an overlap may be an hour): the
 * pages' `date()` gives the day only.
 */
function untilText(reply: FastifyReply, iso: string | null | undefined): string | null {
  if (!iso) return null;
  const format = new Intl.DateTimeFormat(pageLocale(reply.request, reply), {
    dateStyle: 'long',
    timeStyle: 'short',
    timeZone: 'UTC',
  });
  return `${format.format(new Date(iso))} UTC`;
}

/** The form's common data: the algorithms to choose from and the values and problems of each field. */
function formData(reply: FastifyReply, values: ClientFormValues, errors: FieldErrors) {
  const locale = pageLocale(reply.request, reply);
  return { values, errors: shownProblems(errors, locale), algorithms: SIGNING_ALGORITHMS };
}

export function renderClientList(
  reply: FastifyReply,
  deps: Deps,
  page: {
    query: string;
    clients: (ClientView & { deleted?: boolean })[];
    pending?: boolean;
    deleted?: boolean;
  },
): FastifyReply {
  return renderConsolePage(reply, deps, 'console/clients', {
    title: texts(reply).title,
    area: 'clients',
    ...page,
  });
}

export function renderNewClient(
  reply: FastifyReply,
  deps: Deps,
  page: { values: ClientFormValues; errors?: FieldErrors; status?: number },
): FastifyReply {
  return renderConsolePage(
    reply,
    deps,
    'console/clients-new',
    { title: texts(reply).newTitle, area: 'clients', ...formData(reply, page.values, page.errors ?? {}) },
    { status: page.status, switchBase: NEW_CLIENT_PATH },
  );
}

/**
 * The page that shows a new secret, this once: after a registration or a rotation. The answer to
 * the POST itself, never a page a GET can reach again; no cache may keep it (no-store).
 */
export function renderSecretShown(
  reply: FastifyReply,
  deps: Deps,
  page: { kind: 'created' | 'rotated'; client: ClientView; secret?: string; oldUntil?: string | null },
): FastifyReply {
  const c = texts(reply);
  return renderConsolePage(
    reply,
    deps,
    'console/clients-secret',
    {
      title: page.kind === 'created' ? c.createdTitle : c.rotatedTitle,
      area: 'clients',
      ...page,
      oldUntil: untilText(reply, page.oldUntil),
    },
    { status: page.kind === 'created' ? 201 : 200, switchBase: clientPath(page.client.client_id) },
  );
}

/** A client's page: its settings, usage, the edit form (values and problems of a refused edit), secret and access. */
export async function renderClient(
  reply: FastifyReply,
  deps: Deps,
  page: {
    client: ClientView & { previous_secret_expires_at: string | null };
    values?: ClientFormValues;
    errors?: FieldErrors;
    done?: string;
    status?: number;
  },
): Promise<FastifyReply> {
  const usage = await usageByDay(deps.db, page.client.client_id, deps.ctx.clock.now());
  // Never a secret or its hash: each valid one by its last four characters, to tell them apart.
  const secrets = (await listClientSecrets(deps.db, deps.ctx, page.client.client_id)).map((secret) => ({
    hint: secret.hint,
    created: untilText(reply, secret.created_at),
    until: untilText(reply, secret.expires_at),
  }));
  const chart = usageChartData(usage, texts(reply).usageTokens);
  return renderConsolePage(
    reply,
    deps,
    'console/clients-show',
    {
      title: page.client.name,
      area: 'clients',
      client: page.client,
      review: await findClientReview(deps.db, page.client.client_id),
      overlapUntil: untilText(reply, page.client.previous_secret_expires_at),
      secrets,
      done: page.done,
      usage,
      // The dashboard's chart script and uPlot, from this origin; the table holds the same numbers.
      usageChart: chart,
      chartScripts: chartScriptHrefs(),
      chartStylesheet: uplotStylesheet().href,
      overlaps: OVERLAP_CHOICES,
      ...formData(reply, page.values ?? valuesFromClient(page.client), page.errors ?? {}),
    },
    { status: page.status, switchBase: clientPath(page.client.client_id) },
  );
}
