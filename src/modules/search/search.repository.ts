import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SearchableUser } from '../profiles/profile.presenter.js';

export type SearchRow = SearchableUser & { premium: boolean };

/** `%`, `_` and `\` stand for themselves in a LIKE pattern whose ESCAPE character is `\`. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/**
 * One query: enabled users whose lower(username) (or, unless `usernameOnly`, lower(display_name))
 * contains the term literally, in this order: exact username, username prefix, then by trigram
 * similarity (of the username when it matched, else of the display name), then lower(username)
 * in code point order (unique, and the same on every server whatever its collation).
 *
 * The patterns are `'%' || lower(<escaped term>) || '%'` on `lower(column)`, the expressions of the
 * GIN trigram indexes of migration 0004, so they can serve it. Every input is a bound parameter;
 * `now` comes from the injected clock, never SQL now().
 */
export async function searchUsers(
  db: Kysely<Database>,
  input: { term: string; usernameOnly: boolean; limit: number; now: Date },
): Promise<SearchRow[]> {
  const escaped = escapeLike(input.term);
  const contains = sql`'%' || lower(${escaped}) || '%'`;
  const startsWith = sql`lower(${escaped}) || '%'`;
  const usernameMatches = sql`lower(u.username) like ${contains} escape '\\'`;
  const displayNameMatches = input.usernameOnly
    ? sql`false`
    : sql`lower(u.display_name) like ${contains} escape '\\'`;
  const result = await sql<SearchRow>`
    select u.id, u.username, u.display_name, u.avatar_url, u.verification_level,
      exists (
        select 1 from premium_periods p
        where p.user_id = u.id and p.starts_at <= ${input.now} and p.ends_at > ${input.now}
      ) as premium
    from users u
    where u.disabled_at is null
      and (${usernameMatches} or ${displayNameMatches})
    order by
      case
        when lower(u.username) = lower(${input.term}) then 0
        when lower(u.username) like ${startsWith} escape '\\' then 1
        else 2
      end,
      case
        when ${usernameMatches} then similarity(lower(u.username), lower(${input.term}))
        else similarity(lower(u.display_name), lower(${input.term}))
      end desc,
      lower(u.username) collate "C"
    limit ${input.limit}
  `.execute(db);
  return result.rows;
}
