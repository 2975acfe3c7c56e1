import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { maskEmail } from '../../lib/email-mask.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { recordAudit } from '../audit/audit.repository.js';
import { enqueueMail, MailLimitReached, type MailLocale } from '../mail/mail.service.js';
import { findUserById, lockUserById, markEmailVerified, updateUser } from './accounts.repository.js';
import { type SignUpResult, signUp } from './accounts.service.js';
import { emailChangedNotice } from './email-change-mail.js';
import {
  consumeEmailVerification,
  type EmailLinkPurpose,
  insertEmailVerification,
  type UsedEmailLink,
} from './email-verification.repository.js';
import { verificationMail } from './verification-mail.js';

/** How long a verification link works (24 h). */
export const EMAIL_VERIFICATION_TTL_MS = 24 * 3600 * 1000;

/** The page a verification link opens (a fixed path). */
export const EMAIL_VERIFY_PATH = '/email/verify';

/** Where the notice of a changed address sends someone who did not make the change. */
export const PASSWORD_FORGOT_PATH = '/password/forgot';

/**
 * Creates a link for `email` on `trx` and returns it, absolute under PUBLIC_URL. The token is
 * stored only as its SHA-256; the caller queues the message carrying it on the same `trx`, so both
 * are committed together or not at all (the outbox).
 */
export async function createEmailLink(
  trx: Kysely<Database>,
  ctx: Context,
  input: { userId: number; email: string; purpose: EmailLinkPurpose; locale: MailLocale },
): Promise<string> {
  const token = generateSecret('emailVerification');
  const at = ctx.clock.now();
  await insertEmailVerification(trx, {
    tokenHash: hashSecret(token),
    userId: input.userId,
    email: input.email,
    purpose: input.purpose,
    at,
    expiresAt: new Date(at.getTime() + EMAIL_VERIFICATION_TTL_MS),
  });
  // `lang`: the page the link opens speaks the message's language.
  return `${ctx.config.PUBLIC_URL}${EMAIL_VERIFY_PATH}?token=${token}&lang=${input.locale}`;
}

/**
 * Creates a link that verifies `email` and queues the message carrying it, on `trx`.
 * @throws MailLimitReached when the account's hourly limit of these messages is reached (roll back:
 *   a link nobody receives has no use).
 */
export async function sendEmailVerification(
  trx: Kysely<Database>,
  ctx: Context,
  input: { userId: number; username: string; email: string; locale: MailLocale },
): Promise<void> {
  const link = await createEmailLink(trx, ctx, { ...input, purpose: 'verify' });
  const message = verificationMail({ ...input, to: input.email, link });
  if (!(await enqueueMail(trx, ctx, { ...message, userId: input.userId })).queued)
    throw new MailLimitReached();
}

/**
 * Sign-up with an optional e-mail: when one is given, its verification link is made
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
 * A new verification link for the user's current address (`/account/email/resend`). False when
 * there is nothing to verify: no address, or one already verified.
 */
export async function resendEmailVerification(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; locale: MailLocale },
): Promise<'sent' | 'nothing_to_verify' | 'limit'> {
  try {
    return await db.transaction().execute(async (trx) => {
      const user = await findUserById(trx, input.userId);
      if (!user || user.deletedAt || user.email === null || user.emailVerified) return 'nothing_to_verify';
      await sendEmailVerification(trx, ctx, {
        userId: user.id,
        username: user.username,
        email: user.email,
        locale: input.locale,
      });
      return 'sent';
    });
  } catch (error) {
    if (error instanceof MailLimitReached) return 'limit';
    throw error;
  }
}

/**
 * Uses a link (24 h, single use) and returns the address it verified, or undefined
 * for an unknown, used or expired token, a replaced change link, and a `verify` link sent to an
 * address the user no longer has (it never verifies the new one). `locale`: the language of the
 * notice a change sends to the old address.
 */
export async function verifyEmail(
  db: Kysely<Database>,
  ctx: Context,
  input: { token: string; ip: string; locale: MailLocale },
): Promise<{ email: string } | undefined> {
  return db.transaction().execute(async (trx) => {
    const at = ctx.clock.now();
    const link = await consumeEmailVerification(trx, { tokenHash: hashSecret(input.token), now: at });
    if (!link) return undefined;
    const actor = `user:${link.userId}`;
    if (link.purpose === 'change') {
      const user = await lockUserById(trx, link.userId);
      if (!user || user.deletedAt) return undefined;
      // Already the user's address (another change made it so): the link only confirms it.
      if (user.email !== link.email) {
        await changeEmail(trx, ctx, { user, link, at, ip: input.ip, locale: input.locale });
        return { email: link.email };
      }
    }
    if (!(await markEmailVerified(trx, { userId: link.userId, email: link.email, at }))) return undefined;
    await recordAudit(trx, { at, actor, action: 'email_verified', subject: actor, ip: input.ip });
    return { email: link.email };
  });
}

/**
 * Makes the link's address the user's, verified, with its audit event and the notice to the old
 * address in the same transaction. The audit keeps the
 * addresses masked: the log outlives the account, and deletion clears the addresses.
 */
async function changeEmail(
  trx: Kysely<Database>,
  ctx: Context,
  input: {
    user: { id: number; username: string; email: string | null };
    link: UsedEmailLink;
    at: Date;
    ip: string;
    locale: MailLocale;
  },
): Promise<void> {
  const { user, link, at } = input;
  const actor = `user:${user.id}`;
  await updateUser(trx, user.id, { email: link.email, emailVerified: true, updatedAt: at });
  await recordAudit(trx, {
    at,
    actor,
    action: 'email_changed',
    subject: actor,
    ip: input.ip,
    details: { from: user.email === null ? null : maskEmail(user.email), to: maskEmail(link.email) },
  });
  if (user.email === null) return;
  const { PUBLIC_URL } = ctx.config;
  await enqueueMail(trx, ctx, {
    ...emailChangedNotice({
      to: user.email,
      username: user.username,
      locale: input.locale,
      maskedNewAddress: maskEmail(link.email),
      resetLink: `${PUBLIC_URL}${PASSWORD_FORGOT_PATH}?lang=${input.locale}`,
    }),
    // Counted, though never refused in practice: each notice follows a change link, itself limited.
    userId: user.id,
  });
}
