import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** A user's TOTP key as stored: sealed, confirmed or still waiting for its first code. */
export interface TotpCredential {
  userId: number;
  secretSealed: string;
  createdAt: Date;
  confirmedAt: Date | null;
  lastUsedStep: number | null;
}

/** The user's TOTP credential, confirmed or not. */
export async function findTotpCredential(
  db: Kysely<Database>,
  userId: number,
): Promise<TotpCredential | undefined> {
  const row = await db
    .selectFrom('totp_credentials')
    .select(['user_id', 'secret_sealed', 'created_at', 'confirmed_at', 'last_used_step'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row
    ? {
        userId: row.user_id,
        secretSealed: row.secret_sealed,
        createdAt: row.created_at,
        confirmedAt: row.confirmed_at,
        lastUsedStep: row.last_used_step,
      }
    : undefined;
}

/**
 * A new, unconfirmed key for the user, replacing an unconfirmed one; a confirmed key stays
 * (false): it must be disabled first.
 */
export async function putPendingTotp(
  db: Kysely<Database>,
  input: { userId: number; secretSealed: string; at: Date },
): Promise<boolean> {
  const row = await db
    .insertInto('totp_credentials')
    .values({ user_id: input.userId, secret_sealed: input.secretSealed, created_at: input.at })
    .onConflict((conflict) =>
      conflict
        .column('user_id')
        .doUpdateSet({ secret_sealed: input.secretSealed, created_at: input.at, last_used_step: null })
        .where('totp_credentials.confirmed_at', 'is', null),
    )
    .returning('user_id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Records that a code of `step` was accepted, only if no code of that step or a later one was
 * (RFC 6238 §5.2: a code is accepted once). One conditional UPDATE: of two requests with the same
 * code, running at once on any instances, exactly one gets true. `confirm` also marks the key
 * confirmed (the first code of an enrolment).
 */
export async function useTotpStep(
  db: Kysely<Database>,
  input: { userId: number; step: number; confirm?: Date },
): Promise<boolean> {
  let query = db
    .updateTable('totp_credentials')
    .set(
      input.confirm
        ? { last_used_step: input.step, confirmed_at: input.confirm }
        : { last_used_step: input.step },
    )
    .where('user_id', '=', input.userId)
    .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', input.step)]));
  query = input.confirm
    ? query.where('confirmed_at', 'is', null)
    : query.where('confirmed_at', 'is not', null);
  const row = await query.returning('user_id').executeTakeFirst();
  return row !== undefined;
}

/** Removes the user's TOTP key (disabling, a reset, account deletion); whether there was one. */
export async function deleteTotpCredential(db: Kysely<Database>, userId: number): Promise<boolean> {
  const rows = await db.deleteFrom('totp_credentials').where('user_id', '=', userId).execute();
  return rows.some((row) => Number(row.numDeletedRows) > 0);
}

/** Replaces the sealed form of the user's key (the same key, sealed with the current secret). */
export async function resealTotpCredential(
  db: Kysely<Database>,
  input: { userId: number; secretSealed: string },
): Promise<void> {
  await db
    .updateTable('totp_credentials')
    .set({ secret_sealed: input.secretSealed })
    .where('user_id', '=', input.userId)
    .execute();
}
