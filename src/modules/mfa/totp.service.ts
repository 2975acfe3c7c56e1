import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { open, seal } from '../../lib/sealed-secret.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail.service.js';
import { enqueueMfaNotice } from './mfa-mail.js';
import { deleteRecoveryCodes } from './recovery-codes.repository.js';
import { issueRecoveryCodes } from './recovery-codes.service.js';
import {
  deleteTotpCredential,
  findTotpCredential,
  putPendingTotp,
  resealTotpCredential,
  useTotpStep,
} from './totp.repository.js';
import { newTotpKey, totpStepOf, totpUri } from './totp-code.js';

/** The purpose the TOTP keys are sealed under (src/lib/sealed-secret.ts). */
const SEAL_PURPOSE = 'totp-key';

/** The user's TOTP state, as the security page shows it. */
export type TotpState = 'off' | 'pending' | 'on';

/** Where a change came from, for the audit log and the language of the notice. */
export interface ChangeOrigin {
  ip: string | null;
  locale: MailLocale;
}

/** The user's TOTP key in plain text, or null (none, or sealed with a secret no longer configured). */
export async function totpKeyOf(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
): Promise<{ key: string; confirmed: boolean; sealedWithFormerSecret: boolean } | null> {
  const credential = await findTotpCredential(db, userId);
  if (!credential) return null;
  const current = open(credential.secretSealed, [ctx.config.COOKIE_SECRET], SEAL_PURPOSE);
  const key = current ?? open(credential.secretSealed, ctx.config.COOKIE_SECRET_PREVIOUS, SEAL_PURPOSE);
  return key === null
    ? null
    : { key, confirmed: credential.confirmedAt !== null, sealedWithFormerSecret: current === null };
}

/** Whether the user has TOTP on, waiting for its first code, or off. */
export async function totpState(db: Kysely<Database>, userId: number): Promise<TotpState> {
  const credential = await findTotpCredential(db, userId);
  if (!credential) return 'off';
  return credential.confirmedAt ? 'on' : 'pending';
}

/** The issuer named in authenticator apps: the host of PUBLIC_URL, which the user recognises. */
function issuerOf(ctx: Context): string {
  return new URL(ctx.config.PUBLIC_URL).host;
}

/**
 * The key and `otpauth://` URI of an enrolment waiting for its first code: shown only until that
 * code confirms it, never after.
 */
export async function pendingEnrolment(
  db: Kysely<Database>,
  ctx: Context,
  user: { id: number; username: string },
): Promise<{ key: string; uri: string } | null> {
  const current = await totpKeyOf(db, ctx, user.id);
  if (!current || current.confirmed) return null;
  return {
    key: current.key,
    uri: totpUri({ key: current.key, issuer: issuerOf(ctx), label: user.username }),
  };
}

/**
 * Starts (or restarts) enrolment: a new key, sealed, unconfirmed. False when TOTP is already on:
 * it must be disabled first, so a stolen session cannot swap the key silently.
 */
export async function startTotpEnrolment(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; ip: string | null },
): Promise<boolean> {
  const key = newTotpKey();
  return db.transaction().execute(async (trx) => {
    const at = ctx.clock.now();
    const started = await putPendingTotp(trx, {
      userId: input.userId,
      secretSealed: seal(key, ctx.config.COOKIE_SECRET, SEAL_PURPOSE),
      at,
    });
    if (started)
      await recordAudit(trx, {
        at,
        actor: `user:${input.userId}`,
        action: 'totp_enrolment_started',
        ip: input.ip,
      });
    return started;
  });
}

/**
 * Confirms a pending enrolment with a first code (RFC 6238, ±1 step; its step is recorded as used):
 * TOTP is on, 10 recovery codes are made and returned to be shown once, the user is told.
 */
export async function confirmTotpEnrolment(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; code: string } & ChangeOrigin,
): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false }> {
  const current = await totpKeyOf(db, ctx, input.userId);
  if (!current || current.confirmed) return { ok: false };
  const at = ctx.clock.now();
  const step = totpStepOf(current.key, input.code, at);
  if (step === null) return { ok: false };
  return db.transaction().execute(async (trx) => {
    if (!(await useTotpStep(trx, { userId: input.userId, step, confirm: at }))) return { ok: false };
    const recoveryCodes = await issueRecoveryCodes(trx, ctx, input.userId);
    await recordAudit(trx, { at, actor: `user:${input.userId}`, action: 'totp_enabled', ip: input.ip });
    await enqueueMfaNotice(trx, ctx, { userId: input.userId, notice: 'totp_enabled', locale: input.locale });
    return { ok: true, recoveryCodes };
  });
}

/**
 * Checks a code of the user's confirmed key and records its step as used: a code is accepted once
 * (RFC 6238 §5.2), even by requests arriving together (one conditional UPDATE decides). The caller
 * counts the attempt against the sign-in limits first.
 */
export async function useTotpCode(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; code: string },
): Promise<boolean> {
  const current = await totpKeyOf(db, ctx, input.userId);
  if (!current?.confirmed) return false;
  const step = totpStepOf(current.key, input.code, ctx.clock.now());
  if (step === null || !(await useTotpStep(db, { userId: input.userId, step }))) return false;
  // A key sealed before a rotation of COOKIE_SECRET moves to the current secret, so that the
  // former one can be dropped from COOKIE_SECRET_PREVIOUS once every key in use has moved.
  if (current.sealedWithFormerSecret)
    await resealTotpCredential(db, {
      userId: input.userId,
      secretSealed: seal(current.key, ctx.config.COOKIE_SECRET, SEAL_PURPOSE),
    });
  return true;
}

/** Turns TOTP off and removes the recovery codes; the caller has checked the password or a code. */
export async function disableTotp(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number } & ChangeOrigin,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const removed = await deleteTotpCredential(trx, input.userId);
    await deleteRecoveryCodes(trx, input.userId);
    if (!removed) return false;
    const at = ctx.clock.now();
    await recordAudit(trx, { at, actor: `user:${input.userId}`, action: 'totp_disabled', ip: input.ip });
    await enqueueMfaNotice(trx, ctx, { userId: input.userId, notice: 'totp_disabled', locale: input.locale });
    return true;
  });
}
