import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { recordAudit } from '../audit/audit.repository.js';
import { enqueueMail, type MailLocale } from '../mail/mail.service.js';
import { markEmailVerified } from './accounts.repository.js';
import { type SignUpResult, signUp } from './accounts.service.js';
import { consumeEmailVerification, insertEmailVerification } from './email-verification.repository.js';
import { verificationMail } from './verification-mail.js';

/** How long a verification link works (CONTRACT.md §7: 24 h). */
export const EMAIL_VERIFICATION_TTL_MS = 24 * 3600 * 1000;

/** The page a verification link opens (CONTRACT.md §7, a fixed path). */
export const EMAIL_VERIFY_PATH = '/email/verify';

/**
 * Creates a verification link for `email` and queues the message carrying it, on `trx`: the token
 * and its message are committed together or not at all (the outbox, CONTRACT.md §7). The token is
 * stored only as its SHA-256.
 */
export async function sendEmailVerification(
  trx: Kysely<Database>,
  ctx: Context,
  input: { userId: number; username: string; email: string; locale: MailLocale },
): Promise<void> {
  const token = generateSecret('emailVerification');
  const at = ctx.clock.now();
  await insertEmailVerification(trx, {
    tokenHash: hashSecret(token),
    userId: input.userId,
    email: input.email,
    at,
    expiresAt: new Date(at.getTime() + EMAIL_VERIFICATION_TTL_MS),
  });
  // `lang`: the page the link opens speaks the message's language.
  const link = `${ctx.config.PUBLIC_URL}${EMAIL_VERIFY_PATH}?token=${token}&lang=${input.locale}`;
  await enqueueMail(trx, ctx, {
    ...verificationMail({ ...input, to: input.email, link }),
    userId: input.userId,
  });
}

/** Carries a refused sign-up out of its transaction, so that the transaction rolls back. */
/**
 * Sign-up with an optional e-mail (CONTRACT.md §7): when one is given, its verification link is made
 * and queued in the transaction that creates the user, so both are committed or neither is.
 */
export function signUpAndSendVerification(
  db: Kysely<Database>,
  ctx: Context,
  form: { username: string; password: string; email: string },
  locale: MailLocale,
): Promise<SignUpResult> {
  return signUp(db, ctx, form, async (trx, user) => {
    if (user.email === null) return;
    await sendEmailVerification(trx, ctx, {
      userId: user.id,
      username: user.username,
      email: user.email,
      locale,
    });
  });
}

/**
 * Uses a verification link (CONTRACT.md §7: 24 h, single use) and marks the user's address
 * verified, audited in the same transaction. False for an unknown, used or expired token, and for
 * a link sent to an address the user no longer has (it never verifies the new one).
 */
export async function verifyEmail(
  db: Kysely<Database>,
  ctx: Context,
  input: { token: string; ip: string },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const at = ctx.clock.now();
    const link = await consumeEmailVerification(trx, { tokenHash: hashSecret(input.token), now: at });
    if (!link) return false;
    if (!(await markEmailVerified(trx, { userId: link.userId, email: link.email, at }))) return false;
    await recordAudit(trx, {
      at,
      actor: `user:${link.userId}`,
      action: 'email_verified',
      subject: `user:${link.userId}`,
      ip: input.ip,
    });
    return true;
  });
}
