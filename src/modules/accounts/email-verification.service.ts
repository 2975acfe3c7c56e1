import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { maskEmail } from '../../lib/email-mask.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { recordAudit } from '../audit/audit.repository.js';
import { enqueueMail, type MailLocale } from '../mail/mail.service.js';
import { findUserById, lockUserById, markEmailVerified, updateUser } from './accounts.repository.js';
import { emailChangedNotice } from './email-change-mail.js';
import {
  consumeEmailVerification,
  type EmailLinkPurpose,
  findLiveEmailVerification,
  insertEmailVerification,
  type UsedEmailLink,
} from './email-verification.repository.js';
import { endPendingPasswordResets } from './password-resets.repository.js';
import { type SignUpResult, signUp } from './sign-up.service.js';
import { verificationMail } from './verification-mail.js';

/** How long a verification link works (24 h). */
export const EMAIL_VERIFICATION_TTL_MS = 24 * 3600 * 1000;

/** The page a verification link opens (a fixed path). */
export const EMAIL_VERIFY_PATH = '/email/verify';

/** Where the notice of a changed address sends someone who did not make the change. */
export const PASSWORD_FORGOT_PATH = '/password/forgot';

/** A new link's token and its absolute URL under PUBLIC_URL, in the message's language. */
function newEmailLink(ctx: Context, locale: MailLocale): { token: string; link: string } {
  const token = generateSecret('emailVerification');
  // `lang`: the page the link opens speaks the message's language.
  return { token, link: `${ctx.config.PUBLIC_URL}${EMAIL_VERIFY_PATH}?token=${token}&lang=${locale}` };
}

/** Stores a link's token (only its SHA-256), valid for EMAIL_VERIFICATION_TTL_MS. */
async function storeEmailLink(
  trx: Kysely<Database>,
  ctx: Context,
  input: { userId: number; email: string; purpose: EmailLinkPurpose; token: string },
): Promise<void> {
  const at = ctx.clock.now();
  await insertEmailVerification(trx, {
    tokenHash: hashSecret(input.token),
    userId: input.userId,
    email: input.email,
    purpose: input.purpose,
    at,
    expiresAt: new Date(at.getTime() + EMAIL_VERIFICATION_TTL_MS),
  });
}

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
  const { token, link } = newEmailLink(ctx, input.locale);
  await storeEmailLink(trx, ctx, { ...input, token });
  return link;
}

/**
 * Queues the message carrying a link that verifies `email` (it names the address and the
 * account), and stores the link only when the message was queued, on `trx`. False when the
 * account's or the address's hourly limit of these messages is reached: nothing is stored then (a
 * link nobody receives has no use), and the caller's other work stands.
 */
export async function sendEmailVerification(
  trx: Kysely<Database>,
  ctx: Context,
  input: { userId: number; username: string; email: string; locale: MailLocale },
): Promise<boolean> {
  const { token, link } = newEmailLink(ctx, input.locale);
  const message = verificationMail({ ...input, to: input.email, link });
  if (!(await enqueueMail(trx, ctx, { ...message, userId: input.userId })).queued) return false;
  await storeEmailLink(trx, ctx, { ...input, purpose: 'verify', token });
  return true;
}

/**
 * Sign-up with an optional e-mail: when one is given, its verification link is made
 * and queued in the transaction that creates the user, so both are committed or neither is. When
 * the address already had its hourly share of verification messages (someone signing up with it
 * again and again), the account is still made, with its address unconfirmed and no message: the
 * account page asks for a link later.
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
 * A new verification link for the user's current address (`/account/email/resend`):
 * `nothing_to_verify` for no address, or one confirmed whose claim is held; `limit` past the
 * hourly limits (nothing is stored).
 */
export async function resendEmailVerification(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; locale: MailLocale },
): Promise<'sent' | 'nothing_to_verify' | 'limit'> {
  return db.transaction().execute(async (trx) => {
    const user = await findUserById(trx, input.userId);
    if (!user || user.deletedAt || user.email === null) return 'nothing_to_verify';
    // Confirmed, and holding the claim: nothing to do. An account whose confirmation was withheld
    // may confirm again, and holds the claim if no other account does by then.
    if (user.emailVerified && !user.emailClaimWithheld) return 'nothing_to_verify';
    const sent = await sendEmailVerification(trx, ctx, {
      userId: user.id,
      username: user.username,
      email: user.email,
      locale: input.locale,
    });
    return sent ? 'sent' : 'limit';
  });
}

/** What a used link did: the address it confirmed, for which account, and whether sites are told. */
export interface EmailConfirmed {
  email: string;
  username: string;
  /** Another account holds this address's verified status: `email_verified` stays false. */
  claimWithheld: boolean;
}

/**
 * Uses a link (24 h, single use) and returns the address it verified, or undefined
 * for an unknown, used or expired token, a replaced change link, and a `verify` link sent to an
 * address the user no longer has (it never verifies the new one). `locale`: the language of the
 * notice a change sends to the old address. Whether the `email_verified` claim is released is
 * decided by accounts.repository `markEmailVerified` (the first account to confirm an address).
 */
export async function verifyEmail(
  db: Kysely<Database>,
  ctx: Context,
  input: { token: string; ip: string; locale: MailLocale },
): Promise<EmailConfirmed | undefined> {
  return db.transaction().execute(async (trx) => {
    const at = ctx.clock.now();
    const link = await consumeEmailVerification(trx, { tokenHash: hashSecret(input.token), now: at });
    if (!link) return undefined;
    const actor = `user:${link.userId}`;
    const user = await lockUserById(trx, link.userId);
    if (!user || user.deletedAt) return undefined;
    // A change link to an address that is not yet the user's moves the account there; one that
    // already is (another change made it so) only confirms it.
    const moved = link.purpose === 'change' && user.email !== link.email;
    if (moved) await changeEmail(trx, ctx, { user, link, at, ip: input.ip, locale: input.locale });
    const marked = await markEmailVerified(trx, { userId: link.userId, email: link.email, at });
    if (!marked) return undefined;
    // A move is audited as `email_changed` (changeEmail); a confirmation as `email_verified`.
    if (!moved || marked.claimWithheld)
      await recordAudit(trx, {
        at,
        actor,
        action: 'email_verified',
        subject: actor,
        ip: input.ip,
        ...(marked.claimWithheld ? { details: { claim_withheld: true } } : {}),
      });
    return { email: link.email, username: user.username, claimWithheld: marked.claimWithheld };
  });
}

/**
 * Makes the link's address the user's (the caller then confirms it), ends the account's pending
 * reset links, and writes its audit event and the notice to the old address in the same transaction. The audit keeps the
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
  // Unconfirmed until markEmailVerified, the one place that decides the claim, confirms it.
  await updateUser(trx, user.id, { email: link.email, emailVerified: false, updatedAt: at });
  // Reset links mailed to the old address stop working with the move: whoever reads that mailbox
  // no longer holds the account's recovery.
  await endPendingPasswordResets(trx, { userId: user.id, now: at });
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

/**
 * What a link would confirm, for its page (`/email/verify` GET): the address and the account it
 * belongs to, so that whoever presses the button sees which account they vouch for. Reading
 * changes nothing; undefined for a link that no longer works or an account gone.
 */
export async function findEmailLinkAccount(
  db: Kysely<Database>,
  ctx: Context,
  token: string,
): Promise<{ email: string; username: string; purpose: EmailLinkPurpose } | undefined> {
  const link = await findLiveEmailVerification(db, { tokenHash: hashSecret(token), now: ctx.clock.now() });
  if (!link) return undefined;
  const user = await findUserById(db, link.userId);
  if (!user || user.deletedAt) return undefined;
  return { email: link.email, username: user.username, purpose: link.purpose };
}
