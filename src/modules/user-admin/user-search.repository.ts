import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { escapeLike } from '../search/search.repository.js';

/** How a row matched the term: the order of the console's ranking. */
export type MatchKind = 'id' | 'prefix' | 'substring';

/** One row of the console's user search: every account, disabled and deleted ones included. */
export interface UserSearchRow {
  id: number;
  username: string;
  displayName: string | null;
  email: string | null;
  emailVerified: boolean;
  disabledAt: Date | null;
  deletedAt: Date | null;
  createdAt: Date;
  match: MatchKind;
}

interface Row {
  id: number;
  username: string;
  display_name: string | null;
  email: string | null;
  email_verified: boolean;
  disabled_at: Date | null;
  deleted_at: Date | null;
  created_at: Date;
  /** The value the row matched by (lower-cased), for merging the two prefix ranges in order. */
  key: string;
}

const COLUMNS = sql`u.id, u.username, u.display_name, u.email, u.email_verified, u.disabled_at,
  u.deleted_at, u.created_at`;

function toRow(row: Row, match: MatchKind): UserSearchRow {
  return {
    id: row.id,
    username: row.username,
    displayName: row.display_name,
    email: row.email,
    emailVerified: row.email_verified,
    disabledAt: row.disabled_at,
    deletedAt: row.deleted_at,
    createdAt: row.created_at,
    match,
  };
}

/** `[lower(term), lower(term) + the highest code point)` of a `collate "C"` index: every value starting with the term. */
function prefixRange(column: RawBuilder<unknown>, term: string): RawBuilder<unknown> {
  return sql`(lower(${column}) collate "C" >= lower(${term}) collate "C"
    and lower(${column}) collate "C" < (lower(${term}) || chr(1114111)) collate "C")`;
}

/** The account with this id, whatever its state. */
async function byId(db: Kysely<Database>, id: number): Promise<UserSearchRow[]> {
  const result = await sql<Row>`select ${COLUMNS}, '' as key from users u where u.id = ${id}`.execute(db);
  return result.rows.map((row) => toRow(row, 'id'));
}

/** The columns searched by their start, each with its `collate "C"` index (migrations 0005, 0034, 0037). */
const PREFIX_COLUMNS = [
  { column: sql`u.username`, nullable: false },
  { column: sql`u.email`, nullable: true },
  { column: sql`u.display_name`, nullable: true },
] as const;

/**
 * Usernames, e-mail addresses and display names starting with the term, the first `limit` of their
 * union in code point order of the matched value (a username before an equal address or name): an
 * exact match sorts first, as the smallest value of its range. Each is a range of a `collate "C"`
 * index read in index order, so a common prefix costs only the rows returned, and the first `limit`
 * of each ordered list hold the first `limit` of the union.
 */
async function byPrefix(db: Kysely<Database>, term: string, limit: number): Promise<UserSearchRow[]> {
  const lists = await Promise.all(
    PREFIX_COLUMNS.map(({ column, nullable }) =>
      sql<Row>`select ${COLUMNS}, lower(${column}) collate "C" as key from users u
          where ${nullable ? sql`${column} is not null and ` : sql``}${prefixRange(column, term)}
          order by lower(${column}) collate "C" limit ${limit}`.execute(db),
    ),
  );
  // Code point order, as the indexes compare with collate "C" (not localeCompare); sort is stable.
  const merged = lists
    .flatMap((list) => list.rows)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const seen = new Set<number>();
  return merged
    .filter((row) => !seen.has(row.id) && seen.add(row.id))
    .slice(0, limit)
    .map((row) => toRow(row, 'prefix'));
}

/**
 * Usernames, display names and addresses containing the term but not starting with it (those are
 * the prefix matches), by trigram similarity of the field that matched (username, else display
 * name, else address; ties by username), as the public search ranks them: the GIN trigram indexes
 * of migrations 0004 and 0034. Only for terms of 3 characters or more (a trigram index cannot
 * answer a shorter one, which would read the whole table) and without an `@`.
 */
async function bySubstring(db: Kysely<Database>, term: string, limit: number): Promise<UserSearchRow[]> {
  const contains = sql`'%' || lower(${escapeLike(term)}) || '%'`;
  const inUsername = sql`lower(u.username) like ${contains} escape '\\'`;
  const inDisplayName = sql`lower(u.display_name) like ${contains} escape '\\'`;
  const inEmail = sql`(u.email is not null and lower(u.email) like ${contains} escape '\\')`;
  const result = await sql<Row>`
    select ${COLUMNS}, '' as key from users u
    where (${inUsername} or ${inDisplayName} or ${inEmail})
      and not ${prefixRange(sql`u.username`, term)}
      and not (u.email is not null and ${prefixRange(sql`u.email`, term)})
      and not (u.display_name is not null and ${prefixRange(sql`u.display_name`, term)})
    order by
      case
        when ${inUsername} then similarity(lower(u.username), lower(${term}))
        when ${inDisplayName} then similarity(lower(u.display_name), lower(${term}))
        else similarity(lower(u.email), lower(${term}))
      end desc,
      lower(u.username) collate "C"
    limit ${limit}`.execute(db);
  return result.rows.map((row) => toRow(row, 'substring'));
}

/** The shortest term looked for inside names and addresses (a trigram). */
export const SUBSTRING_MIN_LENGTH = 3;

/**
 * The console's user search: the account whose id is `id` (when the term is one), then usernames,
 * addresses and display names starting with the term, then those containing it; each account once,
 * the first `limit` rows. Each tier runs only when the ones before it did not fill `limit`.
 * `substringTimeoutMs` bounds the substring tier: a term inside millions of names (a common word)
 * is not worth seconds of the database; `partial` says it was cut.
 */
export async function searchAccounts(
  db: Kysely<Database>,
  input: { term: string; id: number | undefined; limit: number; substringTimeoutMs: number },
): Promise<{ rows: UserSearchRow[]; partial: boolean }> {
  const { term, limit } = input;
  const rows: UserSearchRow[] = input.id === undefined ? [] : await byId(db, input.id);
  const idFound = rows.length > 0;
  const add = (more: UserSearchRow[]) => {
    for (const row of more) if (!rows.some((each) => each.id === row.id)) rows.push(row);
  };
  add(await byPrefix(db, term, limit));
  // A term with an `@` is an address, found by its start: no name holds one, and inside addresses
  // its domain's trigrams are among the commonest of the index (hundreds of ms at 10 M users). An
  // id that names an account is the answer: its digits inside names would only cost a scan.
  if (rows.length >= limit || [...term].length < SUBSTRING_MIN_LENGTH || term.includes('@') || idFound)
    return { rows: rows.slice(0, limit), partial: false };
  try {
    const found = await inTransaction(db, async (trx) => {
      // `set local` (the third argument): these end with this transaction, the pooled connection
      // keeps its own. JIT compilation and parallel workers each cost more to start (100 to 300 ms
      // measured at 10 M users) than the few hundred rows a trigram scan reads take.
      await sql`select set_config('statement_timeout', ${String(input.substringTimeoutMs)}, true),
        set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)`.execute(
        trx,
      );
      return bySubstring(trx, term, limit - rows.length);
    });
    add(found);
    return { rows: rows.slice(0, limit), partial: false };
  } catch (error) {
    // 57014 query_canceled: the statement timeout above, and nothing else here cancels.
    if ((error as { code?: string }).code === '57014') return { rows, partial: true };
    throw error;
  }
}

/**
 * Accounts by one exact field, whatever their state (`idp users find`): the username (any case, one
 * account at most), the e-mail address (any case: several accounts may hold one) or the id.
 */
export async function findAccounts(
  db: Kysely<Database>,
  by: { username: string } | { email: string } | { id: number },
  limit: number,
): Promise<UserSearchRow[]> {
  const where =
    'username' in by
      ? sql`lower(u.username) = lower(${by.username})`
      : 'email' in by
        ? sql`u.email is not null and lower(u.email) = lower(${by.email})`
        : sql`u.id = ${by.id}`;
  const result = await sql<Row>`select ${COLUMNS}, '' as key from users u where ${where}
    order by u.id limit ${limit}`.execute(db);
  return result.rows.map((row) => toRow(row, 'id'));
}

/** The newest accounts first, `limit` of them after `offset` (`idp users list`, the console's first page). */
export async function listNewestAccounts(
  db: Kysely<Database>,
  page: { limit: number; offset: number },
): Promise<UserSearchRow[]> {
  const result = await sql<Row>`select ${COLUMNS}, '' as key from users u
    order by u.id desc limit ${page.limit} offset ${page.offset}`.execute(db);
  return result.rows.map((row) => toRow(row, 'id'));
}
