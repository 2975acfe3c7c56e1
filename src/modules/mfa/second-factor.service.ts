import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { NotFound } from '../../lib/errors.js';
import { hashSecret } from '../../lib/secrets.js';
import {
  clearSecondFactorFailures,
  clearSignInAttempts,
  countSignInAttempt,
  findUserByUsername,
  takeSecondFactorSlot,
} from '../accounts/accounts.repository.js';
import type { TrustedSource } from '../accounts/sign-in-result.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail.service.js';
import { deletePasskeysOfUser } from '../passkeys/passkeys.repository.js';
import { secondFactorsOf } from '../sign-in-policy/sign-in-policy.service.js';
import {
  consumePendingSignIn,
  deleteMobilePendingSignInsOfUser,
  deletePendingSignInsOfUser,
  findLivePendingSignIn,
  insertPendingSignIn,
} from './pending-sign-ins.repository.js';
import { countUnusedRecoveryCodes, deleteRecoveryCodes } from './recovery-codes.repository.js';
import { spendRecoveryCode } from './recovery-codes.service.js';
import { afterSecondFactorFailure } from './second-factor-lockout.js';
import { deleteTotpCredential } from './totp.repository.js';
import { useTotpCode } from './totp.service.js';
import { looksLikeTotpCode } from './totp-code.js';

/** docs/pages.md: the password step alone expires in 5 minutes. */
export const PENDING_SIGN_IN_TTL_MS = 5 * 60 * 1000;

export { hasSecondFactor, secondFactorsOf } from '../sign-in-policy/sign-in-policy.service.js';

/** What the second step of this account can be answered with, outside a browser (mobile: no passkey ceremony). */
export async function codeMethodsOf(
  db: Kysely<Database>,
  userId: number,
): Promise<Array<'totp' | 'recovery_code'>> {
  const methods: Array<'totp' | 'recovery_code'> = [];
  if ((await secondFactorsOf(db, userId)).totp) methods.push('totp');
  if ((await countUnusedRecoveryCodes(db, userId)) > 0) methods.push('recovery_code');
  return methods;
}

/**
 * After a right first step (a password, or a provider's sign-in: `firstFactor`) for an account
 * with a second factor: the half-done sign-in, bound to the browser by the returned value (a
 * cookie; only its SHA-256 is stored). It grants nothing itself.
 */
export async function startPendingSignIn(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
  firstFactor: 'pwd' | 'fed' = 'pwd',
): Promise<string> {
  const value = randomBytes(32).toString('base64url');
  const at = ctx.clock.now();
  await insertPendingSignIn(db, {
    idHash: hashSecret(value),
    userId,
    firstFactor,
    at,
    expiresAt: new Date(at.getTime() + PENDING_SIGN_IN_TTL_MS),
  });
  return value;
}

/** The user of a live pending sign-in (unexpired, unconsumed) and how its first step went, or null. */
export async function pendingSignInOf(
  db: Kysely<Database>,
  ctx: Context,
  value: string,
): Promise<{ userId: number; firstFactor: 'pwd' | 'fed' } | null> {
  const pending = await findLivePendingSignIn(db, hashSecret(value), ctx.clock.now());
  return pending ? { userId: pending.userId, firstFactor: pending.firstFactor } : null;
}

/** Ends a pending sign-in once its second step passed: true for exactly one request. */
export function finishPendingSignIn(db: Kysely<Database>, ctx: Context, value: string): Promise<boolean> {
  return consumePendingSignIn(db, hashSecret(value), ctx.clock.now());
}

/**
 * `locked`: no code was checked, the sign-in window's budget being used up (`window`) or, for a
 * source that never signed in to the account, the cap on failures in a row (`failures`).
 */
export type SecondFactorResult =
  | { ok: true; method: 'totp' | 'recovery_code' }
  | { ok: false; locked?: 'window' | 'failures' };

/**
 * Checks a TOTP or recovery code for the second step (failed codes count like failed
 * passwords). Like `authenticate`, the attempt first takes a numbered slot in its source's budget
 * (sign_in_attempts), committed before any check, so parallel guesses on any number of instances
 * never run more than SIGN_IN_MAX_ATTEMPTS checks per window; past it nothing is checked and the
 * answer is "wrong". It then takes a slot in the account's run of checks across windows
 * (second_factor_failures): past SECOND_FACTOR_MAX_FAILURES in a row only a trusted source (a
 * browser or app device that signed in before) is checked. A passing code clears that source's
 * count and ends the run; the run's third failure tells the owner (second-factor-lockout.ts).
 */
export async function verifySecondFactor(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    userId: number;
    code: string;
    trustedSource?: TrustedSource;
    ip: string | null;
    locale: MailLocale;
  },
): Promise<SecondFactorResult> {
  const { config } = ctx;
  const source = (await input.trustedSource?.(input.userId)) || '';
  const attempt = await countSignInAttempt(
    db,
    { userId: input.userId, source },
    ctx.clock.now(),
    config.SIGN_IN_WINDOW_SECONDS * 1000,
  );
  const withinWindow = attempt <= config.SIGN_IN_MAX_ATTEMPTS;
  const failures = withinWindow
    ? await takeSecondFactorSlot(db, {
        userId: input.userId,
        trusted: source !== '',
        max: config.SECOND_FACTOR_MAX_FAILURES,
        at: ctx.clock.now(),
      })
    : null;
  // Past either budget no code is checked, and the answer says which one held it back.
  const locked = !withinWindow ? 'window' : failures === null ? 'failures' : undefined;
  const code = input.code.slice(0, 64);
  let result: SecondFactorResult = locked ? { ok: false, locked } : { ok: false };
  if (locked === undefined) {
    if (looksLikeTotpCode(code)) {
      if (await useTotpCode(db, ctx, { userId: input.userId, code })) result = { ok: true, method: 'totp' };
    } else if (await spendRecoveryCode(db, ctx, { ...input, code })) {
      result = { ok: true, method: 'recovery_code' };
    }
  }
  const actor = `user:${input.userId}`;
  await recordAudit(db, {
    at: ctx.clock.now(),
    actor,
    action: result.ok ? 'second_factor_passed' : 'second_factor_failed',
    subject: actor,
    ip: input.ip,
    details: result.ok
      ? { method: result.method }
      : { locked: locked !== undefined, ...(locked ? { by: locked } : { in_a_row: failures }) },
  });
  if (result.ok) {
    await clearSignInAttempts(db, input.userId, source);
    await clearSecondFactorFailures(db, input.userId);
  } else if (failures !== null) {
    await afterSecondFactorFailure(db, ctx, {
      userId: input.userId,
      failures,
      ip: input.ip,
      locale: input.locale,
    });
  }
  return result;
}

/** What removeSecondFactors removed. */
export interface RemovedFactors {
  /** Whether a TOTP key was on or being set up. */
  totpRemoved: boolean;
  passkeysRemoved: number;
}

/**
 * Removes every second factor of the user (`idp users mfa-reset`, account deletion): the TOTP key,
 * the recovery codes, the passkeys, any half-done sign-in (browser or app) and the run of wrong codes.
 */
export async function removeSecondFactors(trx: Kysely<Database>, userId: number): Promise<RemovedFactors> {
  const totpRemoved = await deleteTotpCredential(trx, userId);
  await deleteRecoveryCodes(trx, userId);
  await deletePendingSignInsOfUser(trx, userId);
  await deleteMobilePendingSignInsOfUser(trx, userId);
  // With the factors gone the run of wrong codes means nothing: the operator's reset unlocks.
  await clearSecondFactorFailures(trx, userId);
  const passkeysRemoved = await deletePasskeysOfUser(trx, userId);
  return { totpRemoved, passkeysRemoved };
}

/**
 * `idp users mfa-reset U`: removes the account's second factors, audited, for a
 * user who lost them. Their password alone signs them in again.
 * @throws NotFound when no user has this username.
 */
export async function resetSecondFactors(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string; actor: string },
): Promise<{ username: string } & RemovedFactors> {
  return db.transaction().execute(async (trx) => {
    const user = await findUserByUsername(trx, input.username);
    if (!user) throw new NotFound(`no user named ${input.username}`);
    const removed = await removeSecondFactors(trx, user.id);
    await recordAudit(trx, {
      at: ctx.clock.now(),
      actor: input.actor,
      action: 'second_factors_reset',
      subject: `user:${user.id}`,
      details: { totp_removed: removed.totpRemoved, passkeys_removed: removed.passkeysRemoved },
    });
    return { username: user.username, ...removed };
  });
}
