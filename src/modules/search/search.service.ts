import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { presentSearchResult } from '../profiles/profile.presenter.js';
import { searchUsers as findUsers } from './search.repository.js';
import { type SearchQuery, type SearchResponse, searchTerm } from './search.schemas.js';

/** The public user search: one query, only the fields of a search result (docs/api.md, `GET /api/users/search`). */
export async function searchUsers(
  db: Kysely<Database>,
  ctx: Context,
  query: SearchQuery,
): Promise<SearchResponse> {
  const rows = await findUsers(db, {
    term: searchTerm(query.q),
    usernameOnly: query.username,
    limit: query.limit,
    now: ctx.clock.now(),
  });
  const publicUrl = ctx.config.PUBLIC_URL;
  return {
    ok: true,
    query: query.q,
    results: rows.map((row) => presentSearchResult(row, row.premium, publicUrl)),
  };
}
