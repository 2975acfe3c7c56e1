import { createHash } from 'node:crypto';
import { sql } from 'kysely';

/** The comment that opens a statement to keep prepared (a comment: PGlite and psql ignore it). */
export const PREPARED_MARK = '/* prepared */ ';

/**
 * Starts a hot statement of the request path, e.g. sql`${prepared}with code as (…)`: on PostgreSQL
 * each pooled connection parses and plans it once and then only binds and executes it
 * (src/db/postgres.ts). Planning the refresh grant's statement cost PostgreSQL about 360 µs of its
 * 450 µs per call (docs/performance.md "Prepared statements"). Only for statements whose text is
 * the same on every call (no lists of varying length): each text is one statement per connection.
 */
export const prepared = sql.raw(PREPARED_MARK);

const names = new Map<string, string>();

/** The name a marked statement is prepared under on each connection, or undefined for another statement. */
export function preparedStatementName(text: string): string | undefined {
  if (!text.startsWith(PREPARED_MARK)) return undefined;
  let name = names.get(text);
  if (name === undefined) {
    name = `idp_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}
