import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** A verification link as stored: the hash of its token, never the token. */
export interface NewEmailVerification {
  tokenHash: string;
  userId: number;
  email: string;
  at: Date;
  expiresAt: Date;
}

export async function insertEmailVerification(
  db: Kysely<Database>,
  verification: NewEmailVerification,
): Promise<void> {
  await db
    .insertInto('email_verifications')
    .values({
      token_hash: verification.tokenHash,
      user_id: verification.userId,
      email: verification.email,
      created_at: verification.at,
      expires_at: verification.expiresAt,
    })
    .execute();
}

/**
 * Uses a link once (CONTRACT.md §7, single use): one statement, so two concurrent uses cannot both
 * succeed. Undefined for an unknown, used or expired token.
 */
export async function consumeEmailVerification(
  db: Kysely<Database>,
  input: { tokenHash: string; now: Date },
): Promise<{ userId: number; email: string } | undefined> {
  const row = await db
    .updateTable('email_verifications')
    .set({ used_at: input.now })
    .where('token_hash', '=', input.tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', input.now)
    .returning(['user_id', 'email'])
    .executeTakeFirst();
  return row && { userId: Number(row.user_id), email: row.email };
}

/** Deletes every verification link of an account (its deletion: the addresses go with it). */
export async function deleteEmailVerificationsOfUser(db: Kysely<Database>, userId: number): Promise<number> {
  const result = await db.deleteFrom('email_verifications').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}
