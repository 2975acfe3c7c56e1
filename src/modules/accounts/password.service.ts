import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { hashPassword, type PasswordProblem, passwordProblem } from '../../lib/password.js';
import { recordAudit } from '../audit/audit.repository.js';
import { endAccountAccess } from './account-access.service.js';
import { updateUser } from './accounts.repository.js';
import { authenticate, type TrustedSource } from './accounts.service.js';
import { endPendingPasswordResets } from './password-resets.repository.js';
import { endBrowserSessions } from './session-end.service.js';

/** The fields of the password form (`/account/password`). */
export type PasswordChangeField = 'currentPassword' | 'newPassword' | 'passwordConfirm';

/** What is wrong with a field of the password form; the page says it in the reader's language. */
export type PasswordChangeProblem =
  | 'current_password_missing'
  | 'current_password_wrong'
  | PasswordProblem
  | 'password_mismatch';

export type PasswordChangeResult =
  | {
      ok: true;
      otherSessionsEnded: number;
      devicesSignedOut: number;
      appsRevoked: boolean;
      /** Whether the session that made the change continues under its new id (`rotateSession`). */
      sessionRotated: boolean;
    }
  | { ok: false; errors: Partial<Record<PasswordChangeField, PasswordChangeProblem>> };

/**
 * A signed-in user changes their password. The new one must meet the rules of every new password
 * (lib/password.ts) and be typed twice; these are checked first, as they cost no password check.
 * The current one is then checked by `authenticate`, exactly as sign-in checks it: one argon2
 * verify, counted against the account's sign-in attempt budget (by the browser's device cookie, as
 * at sign-in), so this form is no way around that budget to guess the password of an unattended
 * session. On success the new hash, the end of every other browser session of the user (the one
 * that made the change stays: docs/pages.md "Profile and password") and the `password_changed`
 * audit event are written in one transaction. So are, on the same transaction, what else a
 * password change ends of what someone who knew the old password may hold: the account's pending
 * reset links, the mobile app's devices (`signOutDevices`) and every app's access (`revokeApps`),
 * both as the reset ends them (account-access.service `endAccountAccess`); and the session that
 * stays is given a new id by `rotateSession` (OWASP Session Management: renew the id when the
 * privilege level changes), so a copy of its old cookie signs nobody in.
 */
export async function changeOwnPassword(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    userId: number;
    username: string;
    currentPassword: string;
    newPassword: string;
    passwordConfirm: string;
    /** The session of the browser that made the change (the hash of its id): it stays. */
    keepSessionIdHash: string;
    /** Sign out every device of the mobile app (the form's box, ticked by default). */
    signOutDevices: boolean;
    /** End every app's access and forget its consent (the form's box, ticked by default). */
    revokeApps: boolean;
    /**
     * Gives the session that stays a new id, on the change's transaction, after the other sessions
     * ended; answers whether it still existed (web/session-rotation.ts).
     */
    rotateSession?: (trx: Kysely<Database>) => Promise<boolean>;
    trustedSource?: TrustedSource;
    ip: string | null;
  },
): Promise<PasswordChangeResult> {
  const errors: Partial<Record<PasswordChangeField, PasswordChangeProblem>> = {};
  if (input.currentPassword === '') errors.currentPassword = 'current_password_missing';
  const problem = passwordProblem(input.newPassword);
  if (problem) errors.newPassword = problem;
  else if (input.passwordConfirm !== input.newPassword) errors.passwordConfirm = 'password_mismatch';
  if (Object.keys(errors).length > 0) return { ok: false, errors };

  const actor = `user:${input.userId}`;
  const checked = await authenticate(db, ctx, {
    username: input.username,
    password: input.currentPassword,
    trustedSource: input.trustedSource,
  });
  if (!checked.ok || checked.user.id !== input.userId) {
    await recordAudit(db, {
      at: ctx.clock.now(),
      actor,
      action: 'password_change_failed',
      subject: actor,
      ip: input.ip,
      details: { via: 'account page', reason: checked.ok ? 'other_account' : checked.reason },
    });
    return { ok: false, errors: { currentPassword: 'current_password_wrong' } };
  }

  // Hashed before the transaction: no row lock is held during argon2's tens of milliseconds.
  const passwordHash = await hashPassword(input.newPassword);
  return db.transaction().execute(async (trx) => {
    const at = ctx.clock.now();
    await updateUser(trx, input.userId, { passwordHash, updatedAt: at });
    const { sessionsEnded: otherSessionsEnded } = await endBrowserSessions(
      trx,
      ctx,
      { userId: input.userId, exceptIdHash: input.keepSessionIdHash },
      'password_changed',
    );
    const sessionRotated = input.rotateSession ? await input.rotateSession(trx) : false;
    const { devicesSignedOut, grantsRevoked } = await endAccountAccess(trx, {
      userId: input.userId,
      at,
      devices: input.signOutDevices,
      apps: input.revokeApps,
    });
    // A link mailed before the change would undo it: whoever asked for it may be who the change
    // locks out.
    const resetLinksEnded = await endPendingPasswordResets(trx, { userId: input.userId, now: at });
    await recordAudit(trx, {
      at,
      actor,
      action: 'password_changed',
      subject: actor,
      ip: input.ip,
      details: {
        via: 'account page',
        other_sessions_ended: otherSessionsEnded,
        session_rotated: sessionRotated,
        devices_signed_out: devicesSignedOut,
        apps_revoked: input.revokeApps,
        grants_revoked: grantsRevoked,
        reset_links_ended: resetLinksEnded,
      },
    });
    return { ok: true, otherSessionsEnded, devicesSignedOut, appsRevoked: input.revokeApps, sessionRotated };
  });
}
