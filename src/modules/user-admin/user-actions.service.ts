import type { Kysely, Transaction } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { InvalidRequest } from '../../lib/errors.js';
import { eraseAccount } from '../accounts/account-deletion.service.js';
import { lockUserById, markEmailVerified } from '../accounts/accounts.repository.js';
import { disableUser, enableUser } from '../accounts/accounts.service.js';
import { sendPasswordResetByOperator } from '../accounts/password-reset.service.js';
import { endBrowserSessions } from '../accounts/session-end.service.js';
import type { User } from '../accounts/user.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail-locales.js';
import { removeSecondFactors } from '../mfa/second-factor.service.js';
import { endAccess } from '../oauth/access.service.js';
import { type OperatorActor, operatorAuditEvent } from '../operators/operator-audit.js';
import { UserActionRefused } from './user-action-refused.js';

/** The audit subject of an account. */
export const subjectOf = (userId: number): string => `user:${userId}`;

/**
 * Runs `work` on the account locked in one transaction (the change and its audit event commit
 * together or not at all). A deleted account is refused unless `deletedToo`.
 */
export function onLockedUser<T>(
  db: Kysely<Database>,
  userId: number,
  work: (trx: Transaction<Database>, user: User) => Promise<T>,
  options: { deletedToo?: boolean } = {},
): Promise<T> {
  return inTransaction(db, async (trx) => {
    const user = await lockUserById(trx, userId);
    if (!user) throw new UserActionRefused('not_found', `no user with id ${userId}`);
    if (user.deletedAt && !options.deletedToo)
      throw new UserActionRefused('deleted', `${user.username} was deleted`);
    return work(trx, user);
  });
}

/**
 * Disables or enables the account through the service `idp users disable` / `enable` use (disabling
 * ends its sessions, devices and grants), with the operator's audit event in the same transaction.
 */
export function setUserDisabled(
  db: Kysely<Database>,
  ctx: Context,
  actor: OperatorActor,
  input: { userId: number; disabled: boolean },
): Promise<{ disabled: boolean }> {
  return onLockedUser(db, input.userId, async (trx, user) => {
    const before = user.disabledAt !== null;
    const set = input.disabled ? disableUser : enableUser;
    const status = await set(trx, ctx, { username: user.username });
    await recordAudit(
      trx,
      operatorAuditEvent(actor, ctx.clock.now(), {
        action: input.disabled ? 'user_disabled' : 'user_enabled',
        subject: subjectOf(user.id),
        before: { disabled: before },
        after: { disabled: status.disabled },
      }),
    );
    return { disabled: status.disabled };
  });
}

/**
 * Signs the account out everywhere: every browser session ends (with the back-channel logouts of
 * its sites queued), and every device of the official app and every grant with its tokens, as the
 * disabling of an account ends them; the account itself stays usable.
 */
export function signOutEverywhere(
  db: Kysely<Database>,
  ctx: Context,
  actor: OperatorActor,
  input: { userId: number },
): Promise<{ sessionsEnded: number; grantsRevoked: number }> {
  return onLockedUser(db, input.userId, async (trx, user) => {
    const at = ctx.clock.now();
    const sessions = await endBrowserSessions(trx, ctx, { userId: user.id }, 'sign_out');
    const access = await endAccess(trx, { userId: user.id }, at);
    const details = {
      sessions_ended: sessions.sessionsEnded,
      logouts_queued: sessions.logoutsQueued,
      grants_revoked: access.grantsRevoked,
      codes_deleted: access.codesDeleted,
    };
    await recordAudit(
      trx,
      operatorAuditEvent(actor, at, {
        action: 'user_signed_out_everywhere',
        subject: subjectOf(user.id),
        details,
      }),
    );
    return { sessionsEnded: sessions.sessionsEnded, grantsRevoked: access.grantsRevoked };
  });
}

/** Removes the account's second factors (TOTP key, recovery codes, passkeys), as `idp users mfa-reset` does. */
export function resetUserSecondFactors(
  db: Kysely<Database>,
  ctx: Context,
  actor: OperatorActor,
  input: { userId: number },
): Promise<{ totpRemoved: boolean; passkeysRemoved: number }> {
  return onLockedUser(db, input.userId, async (trx, user) => {
    const removed = await removeSecondFactors(trx, user.id);
    await recordAudit(
      trx,
      operatorAuditEvent(actor, ctx.clock.now(), {
        action: 'second_factors_reset',
        subject: subjectOf(user.id),
        details: { totp_removed: removed.totpRemoved, passkeys_removed: removed.passkeysRemoved },
      }),
    );
    return removed;
  });
}

/**
 * Queues a password reset link to the account's address through the service of `idp users
 * send-reset`, which records the operator's event with the link (never the link itself).
 */
export function sendUserResetLink(
  db: Kysely<Database>,
  ctx: Context,
  actor: OperatorActor,
  input: { userId: number; locale: MailLocale },
): Promise<{ expiresAt: string }> {
  return onLockedUser(db, input.userId, async (trx, user) => {
    if (user.disabledAt) throw new UserActionRefused('disabled', `${user.username} is disabled`);
    if (user.email === null) throw new UserActionRefused('no_email', `${user.username} has no address`);
    const event = operatorAuditEvent(actor, ctx.clock.now(), {
      action: 'password_reset_sent',
      subject: subjectOf(user.id),
    });
    try {
      const sent = await sendPasswordResetByOperator(trx, ctx, {
        username: user.username,
        locale: input.locale,
        requester: { actor: event.actor, via: 'console', ip: event.ip ?? null, details: event.details },
      });
      return { expiresAt: sent.expires_at };
    } catch (error) {
      // The one refusal left once the account's state was checked above: the hourly limit of mail.
      if (error instanceof InvalidRequest) throw new UserActionRefused('reset_limit', error.message);
      throw error;
    }
  });
}

/**
 * Marks the account's current address confirmed, by the rule a confirmation link follows: when
 * another account confirmed the same address first, the claim stays withheld from sites.
 */
export function markUserEmailVerified(
  db: Kysely<Database>,
  ctx: Context,
  actor: OperatorActor,
  input: { userId: number },
): Promise<{ claimWithheld: boolean }> {
  return onLockedUser(db, input.userId, async (trx, user) => {
    if (user.email === null) throw new UserActionRefused('no_email', `${user.username} has no address`);
    const at = ctx.clock.now();
    const marked = await markEmailVerified(trx, { userId: user.id, email: user.email, at });
    if (!marked) throw new UserActionRefused('not_found', `${user.username} changed meanwhile`);
    await recordAudit(
      trx,
      operatorAuditEvent(actor, at, {
        action: 'email_marked_verified',
        subject: subjectOf(user.id),
        before: { email_verified: user.emailVerified, claim_withheld: user.emailClaimWithheld },
        after: { email_verified: true, claim_withheld: marked.claimWithheld },
      }),
    );
    return marked;
  });
}

/**
 * Deletes the account as its owner would from the account page (the same erasure: sessions, grants,
 * devices, consents, premium and second factors end, the profile is cleared, the username stays
 * reserved), without their password: the operator's event records it.
 */
export function deleteUserAccount(
  db: Kysely<Database>,
  ctx: Context,
  actor: OperatorActor,
  input: { userId: number; locale: MailLocale },
): Promise<{ deleted: true }> {
  return onLockedUser(db, input.userId, async (trx, user) => {
    const erased = await eraseAccount(trx, ctx, user, input.locale);
    await recordAudit(
      trx,
      operatorAuditEvent(actor, ctx.clock.now(), {
        action: 'account_deleted',
        subject: subjectOf(user.id),
        before: { deleted: false, disabled: user.disabledAt !== null },
        after: { deleted: true, disabled: true },
        details: { via: 'console', ...erased },
      }),
    );
    return { deleted: true };
  });
}
