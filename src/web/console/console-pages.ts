import type { FastifyReply } from 'fastify';
import type { Deps } from '../../context.js';
import { type ConsoleCapability, roleCan } from '../../modules/operators/roles.js';
import { versioned } from '../assets/stylesheet.js';
import { issueCsrfToken } from '../csrf.js';
import { type PageOptions, pageLocale, renderPage } from '../pages.js';
import { requiredOperator } from './console-guard.js';
import { consoleTexts } from './i18n/index.js';

export const CONSOLE_STYLESHEET_PATH = '/assets/console.css';

/** public/console.css: the console's wide tables and navigation, over the pages' stylesheet. */
export const consoleStylesheet = versioned('console.css', CONSOLE_STYLESHEET_PATH);

/** The console's areas, in the navigation's order, each with its page and the right to see it. */
export const CONSOLE_AREAS = [
  { area: 'dashboard', href: '/admin', can: 'view' },
  { area: 'users', href: '/admin/users', can: 'view' },
  { area: 'clients', href: '/admin/clients', can: 'view' },
  { area: 'providers', href: '/admin/providers', can: 'view' },
  { area: 'audit', href: '/admin/audit', can: 'view' },
  { area: 'platform', href: '/admin/platform', can: 'view' },
] as const satisfies readonly { area: string; href: string; can: ConsoleCapability }[];

export type ConsoleArea = (typeof CONSOLE_AREAS)[number]['area'];

/**
 * Renders views/<template>.ejs as a console page: inside the console's frame (views/console/_frame.ejs:
 * its navigation, the operator, "leave"), in the page's language. The template gets what every page
 * gets, and `c` (the console's texts), `operator`, `can(capability)` and `csrfToken`.
 */
export function renderConsolePage(
  reply: FastifyReply,
  deps: Deps,
  template: `console/${string}`,
  data: { title: string; area?: ConsoleArea } & Record<string, unknown>,
  options: PageOptions & { status?: number } = {},
): FastifyReply {
  const request = reply.request;
  const operator = requiredOperator(request);
  const { status, ...pageOptions } = options;
  if (status) reply.code(status);
  reply.header('cache-control', 'no-store');
  const can = (capability: ConsoleCapability) => roleCan(operator.role, capability);
  return renderPage(
    reply,
    template,
    {
      ...data,
      c: consoleTexts(pageLocale(request, reply)),
      operator: { username: operator.username, role: operator.role },
      inside: operator.session !== undefined,
      can,
      areas: CONSOLE_AREAS.filter((each) => can(each.can)),
      area: data.area ?? null,
      csrfToken: issueCsrfToken(request, reply, deps.ctx),
    },
    { ...pageOptions, frame: 'console/_frame', stylesheets: [consoleStylesheet().href] },
  );
}
