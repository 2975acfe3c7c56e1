import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { NotFound } from '../../lib/errors.js';
import { hashSecret } from '../../lib/secrets.js';
import {
  clearSignInAttempts,
  countSignInAttempt,
  findUserByUsername,
} from '../accounts/accounts.repository.js';
import type { TrustedSource } from '../accounts/sign-in-result.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail.service.js';
import { deletePasskeysOfUser, hasPasskey } from '../passkeys/passkeys.repository.js';
import {
  consumePendingSignIn,
  deletePendingSignInsOfUser,
  findLivePendingSignIn,
  insertPendingSignIn,
} from './pending-sign-ins.repository.js';
import { deleteRecoveryCodes } from './recovery-codes.repository.js';
import { spendRecoveryCode } from './recovery-codes.service.js';
import { deleteTotpCredential, findTotpCredential } from './totp.repository.js';
import { useTotpCode } from './totp.service.js';
import { looksLikeTotpCode } from './totp-code.js';

/** docs/pages.md: the password step alone expires in 5 minutes. */
export const PENDING_SIGN_IN_TTL_MS = 5 * 60 * 1000;

/** Which second factors the user has (a TOTP key only once confirmed). */
export async function secondFactorsOf(
  db: Kysely<Database>,
  userId: number,
): Promise<{ totp: boolean; passkey: boolean }> {
  const totp = await findTotpCredential(db, userId);
  return { totp: totp?.confirmedAt != null, passkey: await hasPasskey(db, userId) };
}

/**
 * Whether the user has a second factor (a confirmed TOTP key or a passkey), so that a password
 * alone does not sign them in. The one place that decides it.
 */
export async function hasSecondFactor(db: Kysely<Database>, userId: number): Promise<boolean> {
  const factors = await secondFactorsOf(db, userId);
  return factors.totp || factors.passkey;
}

/**
 * After a right password for an account with a second factor: the half-done sign-in, bound to the
 * browser by the returned value (a cookie; only its SHA-256 is stored). It grants nothing itself.
 */
export async function startPendingSignIn(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
): Promise<string> {
  const value = randomBytes(32).toString('base64url');
  const at = ctx.clock.now();
  await insertPendingSignIn(db, {
    idHash: hashSecret(value),
    userId,
    at,
    expiresAt: new Date(at.getTime() + PENDING_SIGN_IN_TTL_MS),
  });
  return value;
}

/** The user of a live pending sign-in (unexpired, unconsumed), or null. */
export async function pendingSignInUser(
  db: Kysely<Database>,
  ctx: Context,
  value: string,
): Promise<number | null> {
  const pending = await findLivePendingSignIn(db, hashSecret(value), ctx.clock.now());
  return pending?.userId ?? null;
}

/** Ends a pending sign-in once its second step passed: true for exactly one request. */
export function finishPendingSignIn(db: Kysely<Database>, ctx: Context, value: string): Promise<boolean> {
  return consumePendingSignIn(db, hashSecret(value), ctx.clock.now());
}

export type SecondFactorResult = { ok: true; method: 'totp' | 'recovery_code' } | { ok: false };

/**
 * Checks a TOTP or recovery code for the second step (failed codes count like failed
 * passwords). Like `authenticate`, the attempt first takes a numbered slot in its source's budget
 * (sign_in_attempts), committed before any check, so parallel guesses on any number of instances
 * never run more than SIGN_IN_MAX_ATTEMPTS checks per window; past it nothing is checked and the
 * answer is "wrong". A passing code clears that source's count.
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
  const code = input.code.slice(0, 64);
  let result: SecondFactorResult = { ok: false };
  if (attempt <= config.SIGN_IN_MAX_ATTEMPTS) {
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
    details: result.ok ? { method: result.method } : { locked: attempt > config.SIGN_IN_MAX_ATTEMPTS },
  });
  if (result.ok) await clearSignInAttempts(db, input.userId, source);
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
 * the recovery codes, the passkeys and any half-done sign-in or passkey ceremony.
 */
export async function removeSecondFactors(trx: Kysely<Database>, userId: number): Promise<RemovedFactors> {
  const totpRemoved = await deleteTotpCredential(trx, userId);
  await deleteRecoveryCodes(trx, userId);
  await deletePendingSignInsOfUser(trx, userId);
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
