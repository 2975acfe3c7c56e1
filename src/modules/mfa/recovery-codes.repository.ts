import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** Replaces every recovery code of the user with these hashes (renewal: the old ones stop working). */
export async function replaceRecoveryCodes(
  db: Kysely<Database>,
  input: { userId: number; codeHashes: readonly string[]; at: Date },
): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', input.userId).execute();
  if (input.codeHashes.length === 0) return;
  await db
    .insertInto('recovery_codes')
    .values(
      input.codeHashes.map((hash) => ({ user_id: input.userId, code_hash: hash, created_at: input.at })),
    )
    .execute();
}

/**
 * Uses the unused code of the user with this hash: one conditional UPDATE (`used_at IS NULL`), so a
 * code passes once however many requests present it at the same time.
 */
export async function useRecoveryCode(
  db: Kysely<Database>,
  input: { userId: number; codeHash: string; at: Date },
): Promise<boolean> {
  const row = await db
    .updateTable('recovery_codes')
    .set({ used_at: input.at })
    .where('user_id', '=', input.userId)
    .where('code_hash', '=', input.codeHash)
    .where('used_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** How many unused recovery codes the user has. */
export async function countUnusedRecoveryCodes(db: Kysely<Database>, userId: number): Promise<number> {
  const row = await db
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Removes every recovery code of the user. */
export async function deleteRecoveryCodes(db: Kysely<Database>, userId: number): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
}
