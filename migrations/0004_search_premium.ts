import { type Kysely, sql } from 'kysely';

/**
 * The public user search (trigram indexes, pg_trgm ships with PostgreSQL and PGlite) and premium,
 * kept as a history of periods rather than one flag, so an extension adds to the remaining time.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
  // Serve `lower(column) like '%q%'` (substring, case-insensitive) and similarity ranking at scale.
  await sql`create index users_username_trgm_idx on users using gin (lower(username) gin_trgm_ops)`.execute(
    db,
  );
  await sql`create index users_display_name_trgm_idx on users using gin (lower(display_name) gin_trgm_ops)`.execute(
    db,
  );

  await db.schema
    .createTable('premium_periods')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('billing_period', 'text', (col) =>
      col.notNull().check(sql`billing_period in ('month', 'year')`),
    )
    .addColumn('starts_at', 'timestamptz', (col) => col.notNull())
    .addColumn('ends_at', 'timestamptz', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addCheckConstraint('premium_periods_positive', sql`ends_at > starts_at`)
    .execute();
  await db.schema
    .createIndex('premium_periods_user_ends_idx')
    .on('premium_periods')
    .columns(['user_id', 'ends_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('premium_periods').execute();
  await sql`drop index users_display_name_trgm_idx`.execute(db);
  await sql`drop index users_username_trgm_idx`.execute(db);
}
