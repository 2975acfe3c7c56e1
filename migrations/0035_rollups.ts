import { type Kysely, sql } from 'kysely';

/**
 * Per-minute counters for the console's charts: one row per minute, counter and key (a client_id
 * for a per-application series, a route class for the error counts, '' for the total). Each
 * instance counts in memory and adds its counts once a minute, `value = value + excluded.value`,
 * so any number of instances add to the same rows and none writes a row per request. The
 * housekeeping purge deletes rows older than ROLLUPS_RETENTION_DAYS.
 *
 * The primary key leads with the minute: the charts read a time range, and the purge deletes the
 * oldest minutes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('metric_rollups')
    .addColumn('minute', 'timestamptz', (col) => col.notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('key', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('value', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('metric_rollups_pkey', ['minute', 'name', 'key'])
    .execute();
  // A minute is a whole minute: a row written with seconds would be a series of its own.
  await sql`
    alter table metric_rollups add constraint metric_rollups_whole_minute
    check (minute = date_trunc('minute', minute))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('metric_rollups').execute();
}
