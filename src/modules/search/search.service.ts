import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { presentSearchResult } from '../profiles/profile.presenter.js';
import { searchUsers as findUsers } from './search.repository.js';
import { type SearchQuery, type SearchResponse, searchTerm } from './search.schemas.js';

/** The public user search (CONTRACT.md §6): one query, only the fields of SPEC.md "User search result". */
export async function searchUsers(
  db: Kysely<Database>,
  clock: Clock,
  publicUrl: string,
  query: SearchQuery,
): Promise<SearchResponse> {
  const rows = await findUsers(db, {
    term: searchTerm(query.q),
    usernameOnly: query.username,
    limit: query.limit,
    now: clock.now(),
  });
  return {
    ok: true,
    query: query.q,
    results: rows.map((row) => presentSearchResult(row, row.premium, publicUrl)),
  };
}
