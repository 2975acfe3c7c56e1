import { type Kysely, sql } from 'kysely';

/**
 * Deleted accounts: the row stays, so its username (and skeleton) stays
 * reserved and the ledger entries that reference it stay valid, but its profile is cleared and
 * `deleted_at` set. A deleted account is always disabled too, so every check that already refuses a
 * disabled user (tokens, sign-in, search, sessions) refuses it; the constraint keeps it so even
 * against a later `disabled_at = null`.
 *
 * The export (`/account/export`) lists the audit events about one user: by actor and by subject.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('deleted_at', 'timestamptz').execute();
  await sql`alter table users add constraint users_deleted_is_disabled
    check (deleted_at is null or disabled_at is not null)`.execute(db);
  await db.schema.createIndex('audit_events_actor_idx').on('audit_events').column('actor').execute();
  await db.schema.createIndex('audit_events_subject_idx').on('audit_events').column('subject').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('audit_events_subject_idx').execute();
  await db.schema.dropIndex('audit_events_actor_idx').execute();
  await db.schema.alterTable('users').dropColumn('deleted_at').execute();
}
