import type { Kysely } from 'kysely';

/**
 * OIDC Core §3.1.2.1 `max_age`: a pending authorization request remembers it, so that the steps
 * after sign-in (resume and the consent decision) check the same condition the authorize step did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('authorization_requests').addColumn('max_age', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('authorization_requests').dropColumn('max_age').execute();
}
