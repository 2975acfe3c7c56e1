import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { NotFound } from '../../lib/errors.js';
import { recordAudit } from '../audit/audit.repository.js';
import { updateProfileSchema } from '../profiles/profiles.schemas.js';
import { findUserById, type UserChanges, updateUser } from './accounts.repository.js';

/** The fields of the profile form (`/account/profile`). */
export type ProfileField = 'displayName' | 'avatarUrl';

/** What is wrong with a field of the profile form; the page says it in the reader's language. */
export type ProfileProblem = 'display_name_invalid' | 'avatar_url_invalid';

const PROBLEMS: Record<ProfileField, ProfileProblem> = {
  displayName: 'display_name_invalid',
  avatarUrl: 'avatar_url_invalid',
};

export type ProfileChangeResult =
  | { ok: true; changed: ProfileField[] }
  | { ok: false; errors: Partial<Record<ProfileField, ProfileProblem>> };

/**
 * A user changes their own display name and avatar URL (the account page). The values are checked
 * by the schema `idp users update` uses (updateProfileSchema: an empty value removes the field), so
 * the page and the CLI accept exactly the same profiles. The change and its `profile_updated` audit
 * event are written in one transaction; nothing is written when nothing changed.
 * @throws NotFound when the user no longer exists.
 */
export async function changeOwnProfile(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; displayName: string; avatarUrl: string; ip: string | null },
): Promise<ProfileChangeResult> {
  const parsed = updateProfileSchema.safeParse({
    displayName: input.displayName,
    avatarUrl: input.avatarUrl,
  });
  if (!parsed.success) {
    const errors: Partial<Record<ProfileField, ProfileProblem>> = {};
    for (const issue of parsed.error.issues) {
      const field = issue.path[0];
      if (field === 'displayName' || field === 'avatarUrl') errors[field] = PROBLEMS[field];
    }
    return { ok: false, errors };
  }
  // Both fields were given, so both parsed to a value (null: removed).
  const wanted = { displayName: parsed.data.displayName ?? null, avatarUrl: parsed.data.avatarUrl ?? null };
  return db.transaction().execute(async (trx) => {
    const user = await findUserById(trx, input.userId);
    if (!user) throw new NotFound('the signed-in user no longer exists');
    const changed = (Object.keys(wanted) as ProfileField[]).filter((field) => user[field] !== wanted[field]);
    if (changed.length === 0) return { ok: true, changed };
    const at = ctx.clock.now();
    const changes: UserChanges = { updatedAt: at };
    for (const field of changed) changes[field] = wanted[field];
    await updateUser(trx, user.id, changes);
    await recordAudit(trx, {
      at,
      actor: `user:${user.id}`,
      action: 'profile_updated',
      subject: `user:${user.id}`,
      ip: input.ip,
      // Which fields, not their values: the audit log keeps no profile data of its own.
      details: { via: 'account page', fields: changed },
    });
    return { ok: true, changed };
  });
}
