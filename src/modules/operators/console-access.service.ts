import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { hashSecret } from '../../lib/secrets.js';
import type { TrustedSource } from '../accounts/sign-in-result.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail-locales.js';
import { verifySecondFactor } from '../mfa/second-factor.service.js';
import { looksLikeTotpCode } from '../mfa/totp-code.js';
import {
  type ConsoleSessionRecord,
  deleteConsoleSessions,
  findConsoleSession,
  insertConsoleSession,
  setConsoleSessionProved,
} from './console-sessions.repository.js';
import { operatorActorId } from './operator-audit.js';

/** How a console session was proved: the console takes an authenticator app's code or a passkey. */
export type ConsoleProof = 'totp' | 'passkey';

export type { ConsoleSessionRecord } from './console-sessions.repository.js';

/**
 * Checks an authenticator app's code for the console, through the second step's own check and
 * budgets (a wrong code here counts as one there). Only a TOTP code: a recovery code is the way
 * back into an account that lost its app, not a key to the console.
 */
export async function checkConsoleCode(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    userId: number;
    code: string;
    trustedSource?: TrustedSource;
    ip: string | null;
    locale: MailLocale;
  },
): Promise<{ ok: boolean; locked: boolean }> {
  if (!looksLikeTotpCode(input.code)) return { ok: false, locked: false };
  const result = await verifySecondFactor(db, ctx, input);
  return { ok: result.ok, locked: !result.ok && result.locked !== undefined };
}

/**
 * Opens a console session on an account session just proved with a second factor: a new random
 * value (256 bits) for the cookie, its hash stored, ADMIN_SESSION_TTL_SECONDS long and never
 * longer than the account session it rests on (it is looked up together with that session).
 */
export async function openConsoleSession(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; accountSessionHash: string; method: ConsoleProof; ip: string | null },
): Promise<{ value: string; expiresAt: Date }> {
  const value = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + ctx.config.ADMIN_SESSION_TTL_SECONDS * 1000);
  await db.transaction().execute(async (trx) => {
    // One console session per operator: entering again ends the one before.
    await deleteConsoleSessions(trx, { userId: input.userId });
    await insertConsoleSession(trx, {
      idHash: hashSecret(value),
      userId: input.userId,
      accountSessionHash: input.accountSessionHash,
      createdAt: now,
      expiresAt,
      provedAt: now,
      method: input.method,
      ip: input.ip,
    });
    await recordAudit(trx, {
      at: now,
      actor: operatorActorId(input.userId),
      action: 'console_entered',
      subject: `user:${input.userId}`,
      ip: input.ip,
      details: { method: input.method },
    });
  });
  return { value, expiresAt };
}

/** The live console session a cookie value names on that account session, or undefined. */
export function liveConsoleSession(
  db: Kysely<Database>,
  ctx: Context,
  input: { value: string; accountSessionHash: string },
): Promise<ConsoleSessionRecord | undefined> {
  return findConsoleSession(db, {
    idHash: hashSecret(input.value),
    accountSessionHash: input.accountSessionHash,
    now: ctx.clock.now(),
  });
}

/** Records a new second-factor proof on the session: destructive actions open for ADMIN_REAUTH_MAX_AGE_SECONDS. */
export async function reproveConsoleSession(
  db: Kysely<Database>,
  ctx: Context,
  input: { session: ConsoleSessionRecord; method: ConsoleProof; ip: string | null },
): Promise<void> {
  const at = ctx.clock.now();
  await db.transaction().execute(async (trx) => {
    await setConsoleSessionProved(trx, { idHash: input.session.idHash, at, method: input.method });
    await recordAudit(trx, {
      at,
      actor: operatorActorId(input.session.userId),
      action: 'console_reauthenticated',
      subject: `user:${input.session.userId}`,
      ip: input.ip,
      details: { method: input.method },
    });
  });
}

/** Whether the session's last proof is recent enough for a destructive action. */
export function recentlyProved(session: Pick<ConsoleSessionRecord, 'provedAt'>, ctx: Context): boolean {
  return (
    ctx.clock.now().getTime() - session.provedAt.getTime() <= ctx.config.ADMIN_REAUTH_MAX_AGE_SECONDS * 1000
  );
}

/** Leaves the console: the session ends; the account session stays. */
export async function closeConsoleSession(
  db: Kysely<Database>,
  ctx: Context,
  input: { session: ConsoleSessionRecord; ip: string | null },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await deleteConsoleSessions(trx, { idHash: input.session.idHash });
    await recordAudit(trx, {
      at: ctx.clock.now(),
      actor: operatorActorId(input.session.userId),
      action: 'console_left',
      subject: `user:${input.session.userId}`,
      ip: input.ip,
    });
  });
}
