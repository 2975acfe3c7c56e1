import type { FastifyReply } from 'fastify';
import type { ClientRegistrationMode } from '../../config-developers.js';
import type { Deps } from '../../context.js';
import type { OwnedAppView } from '../../modules/developer-apps/apps.service.js';
import { issueCsrfToken } from '../csrf.js';
import { type PageOptions, pageLocale, renderPage } from '../pages.js';
import { developersScript, developersStylesheet } from './assets.js';
import { requiredDeveloper } from './developers-guard.js';
import { developersTexts } from './i18n/index.js';

/** What the list and the application's page say of an application's state. */
export type AppStatus = 'awaiting' | 'not_reviewed' | 'approved' | 'disabled';

/**
 * Disabled (or deleted) first; else approved by an operator; else, not reviewed yet: under
 * CLIENT_REGISTRATION=open it signs anyone in ("not reviewed"), otherwise only its owners
 * ("awaiting approval").
 */
export function appStatus(client: OwnedAppView, mode: ClientRegistrationMode): AppStatus {
  if (client.disabled) return 'disabled';
  if (client.approved) return 'approved';
  return mode === 'open' ? 'not_reviewed' : 'awaiting';
}

/** A time to the minute and in UTC (an expiry may be an hour away): the pages' `date()` gives the day only. */
export function minuteText(reply: FastifyReply, iso: string): string {
  const format = new Intl.DateTimeFormat(pageLocale(reply.request, reply), {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: 'UTC',
  });
  return `${format.format(new Date(iso))} UTC`;
}

/**
 * Renders views/developers/<template>.ejs in the page's language, no cache keeping it. The template
 * gets what every page gets, and `d` (the portal's texts), `developer` (the username), `csrfToken`,
 * `copyScript` and `minute(iso)`.
 */
export function renderDevelopersPage(
  reply: FastifyReply,
  deps: Deps,
  template: `developers/${string}`,
  data: { title: string } & Record<string, unknown>,
  options: PageOptions & { status?: number } = {},
): FastifyReply {
  const request = reply.request;
  const { status, ...pageOptions } = options;
  if (status) reply.code(status);
  reply.header('cache-control', 'no-store');
  return renderPage(
    reply,
    template,
    {
      ...data,
      d: developersTexts(pageLocale(request, reply)),
      developer: requiredDeveloper(request).username,
      csrfToken: issueCsrfToken(request, reply, deps.ctx),
      copyScript: developersScript().href,
      minute: (iso: string) => minuteText(reply, iso),
    },
    { ...pageOptions, stylesheets: [developersStylesheet().href, ...(pageOptions.stylesheets ?? [])] },
  );
}
