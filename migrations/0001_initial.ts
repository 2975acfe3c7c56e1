import { type Kysely, sql } from 'kysely';

/** Users, clients and the platform status: what the CLI and the first routes need. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('username', 'text', (col) => col.notNull())
    .addColumn('password_hash', 'text', (col) => col.notNull())
    .addColumn('email', 'text')
    .addColumn('email_verified', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('display_name', 'text')
    .addColumn('verification_level', 'smallint', (col) =>
      col.notNull().defaultTo(0).check(sql`verification_level between 0 and 2`),
    )
    .addColumn('disabled_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  // Usernames are unique case-insensitively: "Alice" and "alice" are one account.
  await sql`create unique index users_username_lower_key on users (lower(username))`.execute(db);

  await db.schema
    .createTable('clients')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('client_id', 'text', (col) => col.notNull().unique())
    .addColumn('secret_hash', 'text', (col) => col.notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('site_url', 'text', (col) => col.notNull())
    .addColumn('redirect_uris', sql`text[]`, (col) =>
      col.notNull().check(sql`cardinality(redirect_uris) between 1 and 20`),
    )
    .addColumn('wallet', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('official_mobile', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('disabled_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();

  // One row: the operator-set overall status.
  await db.schema
    .createTable('platform_state')
    .addColumn('id', 'smallint', (col) => col.primaryKey().check(sql`id = 1`))
    .addColumn('status', 'text', (col) =>
      col.notNull().check(sql`status in ('operational', 'degraded', 'maintenance')`),
    )
    .addColumn('message', 'text')
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`insert into platform_state (id, status) values (1, 'operational')`.execute(db);

  await db.schema
    .createTable('incidents')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('message', 'text')
    .addColumn('severity', 'text', (col) =>
      col.notNull().check(sql`severity in ('minor', 'major', 'critical')`),
    )
    .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ('open', 'resolved')`))
    .addColumn('started_at', 'timestamptz', (col) => col.notNull())
    .addColumn('resolved_at', 'timestamptz')
    .addCheckConstraint(
      'incidents_resolved_consistent',
      sql`(status = 'resolved') = (resolved_at is not null)`,
    )
    .execute();
  await sql`create index incidents_open_idx on incidents (started_at) where status = 'open'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['incidents', 'platform_state', 'clients', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
