import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** The value the running service sealed under its key, or undefined before its first start. */
export async function findSealingKeyCheck(db: Kysely<Database>): Promise<string | undefined> {
  const row = await db.selectFrom('sealing_key_check').select('sealed').executeTakeFirst();
  return row?.sealed;
}

export async function saveSealingKeyCheck(db: Kysely<Database>, sealed: string, at: Date): Promise<void> {
  await db
    .insertInto('sealing_key_check')
    .values({ sealed, updated_at: at })
    .onConflict((oc) => oc.column('id').doUpdateSet({ sealed, updated_at: at }))
    .execute();
}
