import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { NotFound } from '../../lib/errors.js';
import {
  clearSignInAttempts,
  countSecondFactorFailures,
  findUserByUsername,
} from '../accounts/accounts.repository.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail.service.js';
import { enqueueMfaNotice } from './mfa-mail.js';

/*
 * Wrong second-step codes in a row, across sign-in windows (docs/pages.md "Two-step sign-in"):
 * the owner is told once per run, at its third failure (one typo or two tell nobody; an attacker
 * with the password cannot stay under it, since the run ends only when a code passes), and past
 * SECOND_FACTOR_MAX_FAILURES only trusted sources are checked (verifySecondFactor).
 */

/** The failure of a run that mails the owner (or the cap, when it is lower). */
export const WARN_AFTER_FAILURES = 3;

/**
 * After a wrong code that was checked as the run's `failures`-th: the owner's confirmed address is
 * told at the run's third (through the outbox, in the transaction of its audit event); the run
 * reaching the cap is audited (`second_factor_locked`).
 */
export async function afterSecondFactorFailure(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; failures: number; ip: string | null; locale: MailLocale },
): Promise<void> {
  const max = ctx.config.SECOND_FACTOR_MAX_FAILURES;
  const warn = input.failures === Math.min(WARN_AFTER_FAILURES, max);
  const locked = input.failures === max;
  if (!warn && !locked) return;
  const actor = `user:${input.userId}`;
  await inTransaction(db, async (trx) => {
    if (warn)
      await enqueueMfaNotice(trx, ctx, {
        userId: input.userId,
        notice: 'second_factor_failures',
        locale: input.locale,
      });
    if (locked)
      await recordAudit(trx, {
        at: ctx.clock.now(),
        actor,
        action: 'second_factor_locked',
        subject: actor,
        ip: input.ip,
        details: { in_a_row: input.failures },
      });
  });
}

/**
 * `idp users unlock U`: ends the account's lockouts, audited as the operator's: every budget of
 * failed password and code checks (sign_in_attempts, every source) and the run of wrong codes.
 * @throws NotFound when no user has this username.
 */
export async function unlockSignIn(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string; actor: string },
): Promise<{ username: string; second_factor_failures: number }> {
  return inTransaction(db, async (trx) => {
    const user = await findUserByUsername(trx, input.username);
    if (!user) throw new NotFound(`no user named ${input.username}`);
    const failures = await countSecondFactorFailures(trx, user.id);
    // Without a source: every count of the user and the run of wrong codes.
    await clearSignInAttempts(trx, user.id);
    await recordAudit(trx, {
      at: ctx.clock.now(),
      actor: input.actor,
      action: 'sign_in_unlocked',
      subject: `user:${user.id}`,
      details: { second_factor_failures: failures },
    });
    return { username: user.username, second_factor_failures: failures };
  });
}
