import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { maskEmail } from '../../lib/email-mask.js';
import { recordAudit } from '../audit/audit.repository.js';
import { enqueueMail, MailLimitReached, type MailLocale } from '../mail/mail.service.js';
import { emailSchema } from './accounts.schemas.js';
import { authenticate, type TrustedSource } from './accounts.service.js';
import { emailChangeMail, emailChangeRequestedNotice } from './email-change-mail.js';
import { createEmailLink } from './email-verification.service.js';

/** The fields of the e-mail form (`/account/email`). */
export type EmailChangeField = 'newEmail' | 'currentPassword';

/** What is wrong with a field of the e-mail form; the page says it in the reader's language. */
export type EmailChangeProblem =
  | 'email_missing'
  | 'email_invalid'
  | 'email_too_long'
  | 'email_unchanged'
  | 'current_password_missing'
  | 'current_password_wrong'
  /** The account's hourly limit of change links is reached. */
  | 'too_many_messages';

export type EmailChangeResult =
  | { ok: true; email: string }
  | { ok: false; errors: Partial<Record<EmailChangeField, EmailChangeProblem>> };

/** The new address as sign-up validates it (emailSchema), or what is wrong with it. */
function newAddress(
  text: string,
  current: string | null,
): { email: string; problem?: undefined } | { problem: EmailChangeProblem } {
  const trimmed = text.trim();
  if (trimmed === '') return { problem: 'email_missing' };
  const parsed = emailSchema.safeParse(trimmed);
  if (!parsed.success)
    return {
      problem: parsed.error.issues.some((issue) => issue.code === 'too_big')
        ? 'email_too_long'
        : 'email_invalid',
    };
  if (parsed.data === current) return { problem: 'email_unchanged' };
  return { email: parsed.data };
}

/**
 * A signed-in user asks to change their address (it takes effect only when
 * verified through a link sent to it). The current password is asked for, as the address is where
 * a password reset goes: a session left open must not be enough to take the account over. It is
 * checked as sign-in checks it (`authenticate`: counted against the account's attempt budget),
 * after the fields that cost nothing. Then, in one transaction, the `change` link (which makes
 * every older one of the user dead), its message to the NEW address, and the
 * `email_change_requested` audit event. The user's address stays as it is until the link is used.
 */
export async function requestEmailChange(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    /** `emailVerified`: whether `email` is confirmed, and so is told of the request. */
    user: { id: number; username: string; email: string | null; emailVerified?: boolean };
    newEmail: string;
    currentPassword: string;
    trustedSource?: TrustedSource;
    locale: MailLocale;
    ip: string | null;
  },
): Promise<EmailChangeResult> {
  const { user } = input;
  const errors: Partial<Record<EmailChangeField, EmailChangeProblem>> = {};
  const address = newAddress(input.newEmail, user.email);
  if (address.problem) errors.newEmail = address.problem;
  if (input.currentPassword === '') errors.currentPassword = 'current_password_missing';
  if (address.problem || errors.currentPassword) return { ok: false, errors };

  const actor = `user:${user.id}`;
  const checked = await authenticate(db, ctx, {
    username: user.username,
    password: input.currentPassword,
    trustedSource: input.trustedSource,
  });
  if (!checked.ok || checked.user.id !== user.id) {
    await recordAudit(db, {
      at: ctx.clock.now(),
      actor,
      action: 'email_change_failed',
      subject: actor,
      ip: input.ip,
      details: { reason: checked.ok ? 'other_account' : checked.reason },
    });
    return { ok: false, errors: { currentPassword: 'current_password_wrong' } };
  }

  const email = address.email;
  try {
    return await requestedChange(db, ctx, { ...input, email, actor });
  } catch (error) {
    if (error instanceof MailLimitReached) return { ok: false, errors: { newEmail: 'too_many_messages' } };
    throw error;
  }
}

/** The change link, its message and the audit event, on one transaction (see requestEmailChange). */
function requestedChange(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    user: { id: number; username: string; email: string | null; emailVerified?: boolean };
    email: string;
    locale: MailLocale;
    actor: string;
    ip: string | null;
  },
): Promise<EmailChangeResult> {
  const { user, email, actor } = input;
  return db.transaction().execute(async (trx) => {
    const link = await createEmailLink(trx, ctx, {
      userId: user.id,
      email,
      purpose: 'change',
      locale: input.locale,
    });
    const message = emailChangeMail({ to: email, username: user.username, locale: input.locale, link });
    // A change link ends the older ones: without its message it must not stay either.
    if (!(await enqueueMail(trx, ctx, { ...message, userId: user.id })).queued) throw new MailLimitReached();
    // The confirmed address is told at once: where password resets go is about to move, and an
    // owner whose session was used by someone else learns it before the link is opened.
    if (user.email && user.emailVerified)
      await enqueueMail(trx, ctx, {
        ...emailChangeRequestedNotice({
          to: user.email,
          username: user.username,
          locale: input.locale,
          maskedNewAddress: maskEmail(email),
          accountLink: `${ctx.config.PUBLIC_URL}/account/email?lang=${input.locale}`,
        }),
        userId: user.id,
      });
    await recordAudit(trx, {
      at: ctx.clock.now(),
      actor,
      action: 'email_change_requested',
      subject: actor,
      ip: input.ip,
      details: { to: maskEmail(email) },
    });
    return { ok: true, email };
  });
}
