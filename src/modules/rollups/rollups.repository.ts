import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

/** One counter's count in one minute, as an instance adds it. */
export interface RollupCount {
  /** The minute's start (a whole minute). */
  minute: Date;
  name: string;
  /** '' for the total; a client_id or a route class for a series of its own. */
  key: string;
  value: number;
}

/**
 * Adds the counts of one instance in one statement: a row already written by this or another
 * instance for the same minute, counter and key is added to (`value + excluded.value`), never
 * replaced, so the instances' counts sum.
 */
export async function addRollups(db: Kysely<Database>, counts: readonly RollupCount[]): Promise<void> {
  if (counts.length === 0) return;
  await db
    .insertInto('metric_rollups')
    .values(counts.map(({ minute, name, key, value }) => ({ minute, name, key, value })))
    .onConflict((oc) =>
      oc
        .columns(['minute', 'name', 'key'])
        .doUpdateSet({ value: (eb) => eb('metric_rollups.value', '+', eb.ref('excluded.value')) }),
    )
    .execute();
}

/** A bucket's sum of one counter and key. */
export interface RollupBucket {
  /** The bucket's start. */
  at: Date;
  name: string;
  key: string;
  value: number;
}

/**
 * The sums of `names` (of `key` only, or of `keys` only, when given; of each key apart otherwise)
 * in buckets of `bucketMinutes` from `from` (inclusive) to `to` (exclusive). Buckets are counted
 * from the Unix epoch, so a bucket's start does not depend on the range asked for. Empty buckets
 * are absent.
 */
export async function sumRollups(
  db: Kysely<Database>,
  query: {
    names: readonly string[];
    key?: string;
    /** Only these keys (a client's bounded set, such as its token outcomes). */
    keys?: readonly string[];
    from: Date;
    to: Date;
    bucketMinutes: number;
  },
): Promise<RollupBucket[]> {
  if (query.names.length === 0 || query.keys?.length === 0) return [];
  if (!Number.isInteger(query.bucketMinutes) || query.bucketMinutes < 1)
    throw new RangeError('bucketMinutes must be a positive whole number');
  // date_bin (PostgreSQL 14 and later) from the Unix epoch, so a bucket's start does not depend on
  // the range asked for. A literal, not a parameter: the same expression must appear in GROUP BY.
  const bucket = sql<Date>`date_bin(${sql.lit(`${query.bucketMinutes} minutes`)}::interval, minute, timestamptz '1970-01-01 00:00:00+00')`;
  let select = db
    .selectFrom('metric_rollups')
    .select([bucket.as('at'), 'name', 'key', sql<number>`sum(value)::bigint`.as('value')])
    .where('name', 'in', [...query.names])
    .where('minute', '>=', query.from)
    .where('minute', '<', query.to);
  if (query.key !== undefined) select = select.where('key', '=', query.key);
  if (query.keys !== undefined) select = select.where('key', 'in', [...query.keys]);
  const rows = await select.groupBy([bucket, 'name', 'key']).orderBy('at').execute();
  return rows.map((row) => ({
    at: new Date(row.at),
    name: row.name,
    key: row.key,
    value: Number(row.value),
  }));
}
