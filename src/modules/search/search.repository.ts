import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SearchableUser } from '../profiles/profile.presenter.js';

export type SearchRow = SearchableUser & { premium: boolean };

interface MatchRow {
  id: number;
  username: string;
  display_name: string | null;
  avatar_url: string | null;
  verification_level: number;
  premium: boolean;
}

function toSearchRow(row: MatchRow): SearchRow {
  return {
    id: row.id,
    username: row.username,
    displayName: row.display_name,
    avatarUrl: row.avatar_url,
    verificationLevel: row.verification_level,
    premium: row.premium,
  };
}

/** `%`, `_` and `\` stand for themselves in a LIKE pattern whose ESCAPE character is `\`. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/**
 * Enabled users whose lower(username) (or, unless `usernameOnly`, lower(display_name)) contains the
 * term literally: username prefixes first, in code point order (the exact match first), then the
 * other matches by trigram similarity, ties by lower(username).
 *
 * The prefixes are a range of the `collate "C"` index of migration 0005, so a common prefix costs
 * only the rows returned; the second query (only when the first did not fill `limit`) uses the
 * expressions of the GIN trigram indexes of migration 0004.
 */
export async function searchUsers(
  db: Kysely<Database>,
  input: { term: string; usernameOnly: boolean; limit: number; now: Date },
): Promise<SearchRow[]> {
  // Premium is read in the same statement (premium_periods is premium.repository's): one query per search.
  const columns = sql`u.id, u.username, u.display_name, u.avatar_url, u.verification_level,
    exists (
      select 1 from premium_periods p
      where p.user_id = u.id and p.starts_at <= ${input.now} and p.ends_at > ${input.now}
    ) as premium`;
  // [lower(term), lower(term) + the highest code point): every string that starts with the term.
  const inPrefixRange = sql`(lower(u.username) collate "C" >= lower(${input.term}) collate "C"
    and lower(u.username) collate "C" < (lower(${input.term}) || chr(1114111)) collate "C")`;
  const prefixed = await sql<MatchRow>`
    select ${columns}
    from users u
    where u.disabled_at is null and ${inPrefixRange}
    order by lower(u.username) collate "C"
    limit ${input.limit}
  `.execute(db);
  if (prefixed.rows.length >= input.limit) return prefixed.rows.map(toSearchRow);

  const escaped = escapeLike(input.term);
  const contains = sql`'%' || lower(${escaped}) || '%'`;
  const usernameMatches = sql`lower(u.username) like ${contains} escape '\\'`;
  const displayNameMatches = input.usernameOnly
    ? sql`false`
    : sql`lower(u.display_name) like ${contains} escape '\\'`;
  const others = await sql<MatchRow>`
    select ${columns}
    from users u
    where u.disabled_at is null
      and (${usernameMatches} or ${displayNameMatches})
      and not ${inPrefixRange}
    order by
      case
        when ${usernameMatches} then similarity(lower(u.username), lower(${input.term}))
        else similarity(lower(u.display_name), lower(${input.term}))
      end desc,
      lower(u.username) collate "C"
    limit ${input.limit - prefixed.rows.length}
  `.execute(db);
  return [...prefixed.rows, ...others.rows].map(toSearchRow);
}
