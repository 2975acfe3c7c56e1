import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import type { UserDetail } from '../../modules/user-admin/user-detail.service.js';
import type { UserSearchPage } from '../../modules/user-admin/user-search.service.js';
import { PageError, pageLocale } from '../pages.js';
import { renderConsolePage } from './console-pages.js';
import { consoleTexts } from './i18n/index.js';

export const USERS_PATH = '/admin/users';

/** A user's console page. */
export const userPath = (userId: number | string) => `${USERS_PATH}/${userId}`;

/** An id in the path: digits, as `/me` and the search show it; anything else is no user (404). */
export const userParams = z.object({ id: z.string().max(40) });

/** The user id of the path, or a 404 page. */
export function userIdOf(id: string): number {
  const value = /^\d{1,15}$/.test(id) ? Number(id) : 0;
  if (value < 1) throw new PageError(404, 'not_found');
  return value;
}

/** The keys a change redirects back with (`?done=`): anything else shows none. */
export const USER_DONE = [
  'disabled',
  'enabled',
  'signed_out',
  'factors_reset',
  'reset_sent',
  'email_verified',
  'premium_granted',
  'credited',
  'debited',
  'deleted',
] as const;
export type UserDone = (typeof USER_DONE)[number];

/** What a refused action left in its form, shown again beside the reason. */
export interface UserFormValues {
  amount?: string;
  reason?: string;
  days?: string;
  period?: string;
}

const texts = (reply: FastifyReply) => consoleTexts(pageLocale(reply.request, reply)).users;

/** `?q=…&page=…` of a search page (the page only past the first). */
export function searchHref(term: string, page: number): string {
  const params = new URLSearchParams();
  if (term) params.set('q', term);
  if (page > 1) params.set('page', String(page));
  const query = params.toString();
  return query ? `${USERS_PATH}?${query}` : USERS_PATH;
}

/** The search form and its results table. */
export function renderUserList(reply: FastifyReply, deps: Deps, found: UserSearchPage): FastifyReply {
  return renderConsolePage(reply, deps, 'console/users', {
    title: texts(reply).title,
    area: 'users',
    found,
    previousHref: found.page > 1 ? searchHref(found.term, found.page - 1) : null,
    nextHref: found.hasNext ? searchHref(found.term, found.page + 1) : null,
  });
}

/** A coin amount as the pages write it: two decimals. */
const coins = (value: number) => value.toFixed(2);

/** A moment as the console's tables write it, locale-free and to the minute, in UTC (as the audit page). */
const moment = (value: Date | string) =>
  `${new Date(value).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** A user's page: what is known of the account, and the forms of the actions the operator may take. */
export function renderUser(
  reply: FastifyReply,
  deps: Deps,
  page: {
    detail: UserDetail;
    done?: UserDone | undefined;
    refused?: string | undefined;
    values?: UserFormValues;
    status?: number;
  },
): FastifyReply {
  const { user } = page.detail;
  return renderConsolePage(
    reply,
    deps,
    'console/users-show',
    {
      title: user.username,
      area: 'users',
      detail: page.detail,
      base: userPath(user.id),
      done: page.done ?? null,
      refused: page.refused ?? null,
      values: page.values ?? {},
      coins,
      moment,
    },
    { status: page.status, switchBase: userPath(user.id) },
  );
}
