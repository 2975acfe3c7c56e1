import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail.service.js';
import { enqueueMfaNotice } from './mfa-mail.js';
import {
  newRecoveryCode,
  normalizeRecoveryCode,
  RECOVERY_CODE_COUNT,
  recoveryCodeHash,
} from './recovery-codes.js';
import { replaceRecoveryCodes, useRecoveryCode } from './recovery-codes.repository.js';
import { findTotpCredential } from './totp.repository.js';

/**
 * Makes RECOVERY_CODE_COUNT new recovery codes for the user, replacing all the old ones, and
 * returns them in plain text to be shown once: only their hashes are stored.
 */
export async function issueRecoveryCodes(
  trx: Kysely<Database>,
  ctx: Context,
  userId: number,
): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const codeHashes = codes.map((code) => recoveryCodeHash(normalizeRecoveryCode(code) as string));
  await replaceRecoveryCodes(trx, { userId, codeHashes, at: ctx.clock.now() });
  return codes;
}

/** New recovery codes for a user with TOTP on (the old ones stop working); null when TOTP is off. */
export async function renewRecoveryCodes(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; ip: string | null; locale: MailLocale },
): Promise<string[] | null> {
  return db.transaction().execute(async (trx) => {
    const credential = await findTotpCredential(trx, input.userId);
    if (!credential?.confirmedAt) return null;
    const codes = await issueRecoveryCodes(trx, ctx, input.userId);
    const at = ctx.clock.now();
    await recordAudit(trx, {
      at,
      actor: `user:${input.userId}`,
      action: 'recovery_codes_renewed',
      ip: input.ip,
    });
    await enqueueMfaNotice(trx, ctx, { ...input, notice: 'recovery_codes_renewed' });
    return codes;
  });
}

/**
 * Uses one of the user's recovery codes: it passes once (an atomic conditional UPDATE), is recorded
 * and the user is told. The caller counts the attempt against the sign-in limits first.
 */
export async function spendRecoveryCode(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; code: string; ip: string | null; locale: MailLocale },
): Promise<boolean> {
  const normalized = normalizeRecoveryCode(input.code);
  if (normalized === null) return false;
  return db.transaction().execute(async (trx) => {
    const at = ctx.clock.now();
    const used = await useRecoveryCode(trx, {
      userId: input.userId,
      codeHash: recoveryCodeHash(normalized),
      at,
    });
    if (!used) return false;
    await recordAudit(trx, { at, actor: `user:${input.userId}`, action: 'recovery_code_used', ip: input.ip });
    await enqueueMfaNotice(trx, ctx, { ...input, notice: 'recovery_code_used' });
    return true;
  });
}
