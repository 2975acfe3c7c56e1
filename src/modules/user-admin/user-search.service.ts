import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { searchTerm } from '../search/search.schemas.js';
import {
  findAccounts,
  listNewestAccounts,
  SUBSTRING_MIN_LENGTH,
  searchAccounts,
  type UserSearchRow,
} from './user-search.repository.js';

export type { UserSearchRow } from './user-search.repository.js';

/** Rows on one page of the console's search. */
export const USER_PAGE_SIZE = 25;
/** The last page offered: past it an operator narrows the search instead of paging on. */
export const USER_MAX_PAGE = 40;
/** The longest term searched (an e-mail address may be long; no name is longer). */
export const USER_QUERY_MAX_LENGTH = 254;
/**
 * How long the search for a term inside names and addresses may take before the page shows what
 * the other matches found: a common word occurs in millions of names at scale.
 */
export const SUBSTRING_TIMEOUT_MS = 1000;

/** The largest id the search reads as one (PostgreSQL's bigint ids stay far below 2^53). */
const MAX_ID = Number.MAX_SAFE_INTEGER;

/**
 * The account id a term names, if any: the id as digits (as `sub` and `/me` show it), or as the
 * audit log writes it (`user:42`). A username is never only digits, so digits are always an id;
 * they are still searched as a prefix too (a username may start with them).
 */
export function idOfTerm(term: string): number | undefined {
  const match = /^(?:user:|#)?(\d{1,16})$/i.exec(term);
  if (!match?.[1]) return undefined;
  const id = Number(match[1]);
  return id >= 1 && id <= MAX_ID ? id : undefined;
}

/**
 * What is searched for: NFC-normalized and trimmed as the public search takes it, without control
 * characters (no name or address holds one, and PostgreSQL refuses NUL in text), at most
 * USER_QUERY_MAX_LENGTH characters.
 */
export function termOf(q: string | undefined): string {
  return searchTerm((q ?? '').replace(/\p{Cc}/gu, '')).slice(0, USER_QUERY_MAX_LENGTH);
}

/** One page of the console's search. */
export interface UserSearchPage {
  /** The term as searched (normalized), '' for the newest accounts. */
  term: string;
  page: number;
  rows: UserSearchRow[];
  hasNext: boolean;
  /** The term is too short to be looked for inside names (or is an address): only ids, names and addresses starting with it. */
  prefixOnly: boolean;
  /** Looking inside names took too long: only the other matches are shown. */
  partial: boolean;
}

/**
 * The console's user search, ranked as the public search ranks: the account with that id, then
 * usernames, e-mail addresses and display names starting with the term (the exact one first), then
 * those containing it by similarity. Disabled and deleted accounts are
 * found too. Without a term, the newest accounts. Pages of USER_PAGE_SIZE, up to USER_MAX_PAGE.
 */
export async function searchUsersForConsole(
  db: Kysely<Database>,
  input: { q?: string | undefined; page?: number | undefined },
): Promise<UserSearchPage> {
  const term = termOf(input.q);
  const page = Math.min(Math.max(1, Math.trunc(input.page ?? 1) || 1), USER_MAX_PAGE);
  const offset = (page - 1) * USER_PAGE_SIZE;
  // One row more than the page: whether there is a next one.
  const need = offset + USER_PAGE_SIZE + 1;
  if (term === '') {
    const rows = await listNewestAccounts(db, { limit: USER_PAGE_SIZE + 1, offset });
    return pageOf('', page, rows, 0, false, false);
  }
  const found = await searchAccounts(db, {
    term,
    id: idOfTerm(term),
    limit: need,
    substringTimeoutMs: SUBSTRING_TIMEOUT_MS,
  });
  const prefixOnly = [...term].length < SUBSTRING_MIN_LENGTH;
  return pageOf(term, page, found.rows, offset, prefixOnly, found.partial);
}

function pageOf(
  term: string,
  page: number,
  rows: UserSearchRow[],
  offset: number,
  prefixOnly: boolean,
  partial: boolean,
): UserSearchPage {
  const shown = rows.slice(offset, offset + USER_PAGE_SIZE);
  const hasNext = rows.length > offset + USER_PAGE_SIZE && page < USER_MAX_PAGE;
  return { term, page, rows: shown, hasNext, prefixOnly, partial };
}

/**
 * `idp users list`: the newest `limit` accounts, or with `search` the first `limit` matches as the
 * console ranks them (without its pages; the substring step has the same time bound).
 */
export async function listUsers(
  db: Kysely<Database>,
  input: { search?: string | undefined; limit: number },
): Promise<UserSearchRow[]> {
  const term = termOf(input.search);
  if (term === '') return listNewestAccounts(db, { limit: input.limit, offset: 0 });
  const found = await searchAccounts(db, {
    term,
    id: idOfTerm(term),
    limit: input.limit,
    substringTimeoutMs: SUBSTRING_TIMEOUT_MS,
  });
  return found.rows;
}

/** The most accounts `idp users find` prints (an address may be on several). */
export const FIND_LIMIT = 100;

/** `idp users find`: the accounts with exactly this username, e-mail address or id. */
export function findUsersExactly(
  db: Kysely<Database>,
  by: { username: string } | { email: string } | { id: number },
): Promise<UserSearchRow[]> {
  return findAccounts(db, by, FIND_LIMIT);
}

/** An account as `idp users list` and `find` print it (never a secret: there is none in a row). */
export function presentAccount(row: UserSearchRow): Record<string, string | number | boolean | null> {
  return {
    id: row.id,
    username: row.username,
    display_name: row.displayName,
    email: row.email,
    email_verified: row.emailVerified,
    status: row.deletedAt ? 'deleted' : row.disabledAt ? 'disabled' : 'active',
    created_at: row.createdAt.toISOString(),
  };
}
