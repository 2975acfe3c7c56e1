import { type Kysely, sql } from 'kysely';

/**
 * E-mail change ("/account/email: a new address takes effect only when verified
 * through a link sent to it"). A link's `purpose` says what using it does: `verify` marks the
 * user's address verified while it is still the one the link was sent to (every link before this
 * migration); `change` makes the link's address the user's, verified. Only the newest `change` link
 * of a user works, which the lookup by (user_id, purpose, id) answers from the index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('email_verifications')
    .addColumn('purpose', 'text', (col) =>
      col.notNull().defaultTo('verify').check(sql`purpose in ('verify', 'change')`),
    )
    .execute();
  await sql`create index email_verifications_user_purpose_idx
    on email_verifications (user_id, purpose, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('email_verifications_user_purpose_idx').execute();
  await db.schema.alterTable('email_verifications').dropColumn('purpose').execute();
}
