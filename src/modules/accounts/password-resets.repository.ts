import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** A reset link as stored: the hash of its token, never the token. */
export interface NewPasswordReset {
  tokenHash: string;
  userId: number;
  email: string;
  at: Date;
  expiresAt: Date;
}

/** The user and address of a link that still works. */
export interface LivePasswordReset {
  userId: number;
  email: string;
}

export async function insertPasswordReset(db: Kysely<Database>, reset: NewPasswordReset): Promise<void> {
  await db
    .insertInto('password_resets')
    .values({
      token_hash: reset.tokenHash,
      user_id: reset.userId,
      email: reset.email,
      created_at: reset.at,
      expires_at: reset.expiresAt,
    })
    .execute();
}

/**
 * The links of `tokenHash` that still work: not used, not expired, and the newest of its user
 * ("only the newest one works"). Newest by id, which a later link always has, so
 * a new link ends the older ones without touching them.
 */
function liveLinks(db: Kysely<Database>, input: { tokenHash: string; now: Date }) {
  return db
    .selectFrom('password_resets as link')
    .where('link.token_hash', '=', input.tokenHash)
    .where('link.used_at', 'is', null)
    .where('link.expires_at', '>', input.now)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('password_resets as newer')
            .select('newer.id')
            .whereRef('newer.user_id', '=', 'link.user_id')
            .whereRef('newer.id', '>', 'link.id'),
        ),
      ),
    );
}

/** The link of `tokenHash` if it still works; reading it changes nothing (a mail scanner's GET). */
export async function findLivePasswordReset(
  db: Kysely<Database>,
  input: { tokenHash: string; now: Date },
): Promise<LivePasswordReset | undefined> {
  const row = await liveLinks(db, input).select(['link.user_id', 'link.email']).executeTakeFirst();
  return row && { userId: Number(row.user_id), email: row.email };
}

/**
 * Uses a link once (single use): one conditional UPDATE, so of two concurrent uses
 * only one finds `used_at` still null. Undefined for an unknown, used, expired or superseded token.
 */
export async function consumePasswordReset(
  db: Kysely<Database>,
  input: { tokenHash: string; now: Date },
): Promise<LivePasswordReset | undefined> {
  const row = await db
    .updateTable('password_resets')
    .set({ used_at: input.now })
    .where('id', 'in', liveLinks(db, input).select('link.id'))
    .where('used_at', 'is', null)
    .returning(['user_id', 'email'])
    .executeTakeFirst();
  return row && { userId: Number(row.user_id), email: row.email };
}

/** Deletes every reset link of an account (its deletion: the address goes with it). */
export async function deletePasswordResetsOfUser(db: Kysely<Database>, userId: number): Promise<number> {
  const result = await db.deleteFrom('password_resets').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Ends every reset link of an account that still works (a password change, a change of address):
 * they expire now, in the caller's transaction, and are kept as the record of what was sent.
 */
export async function endPendingPasswordResets(
  db: Kysely<Database>,
  input: { userId: number; now: Date },
): Promise<number> {
  const result = await db
    .updateTable('password_resets')
    .set({ expires_at: input.now })
    .where('user_id', '=', input.userId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', input.now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
