import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { hashSecret } from '../../lib/secrets.js';
import { linksIn } from './links.js';
import { MAIL_LOCALES, type MailLocale } from './mail-locales.js';
import {
  countRecentMailLocked,
  countRecentRecipientMailLocked,
  insertMail,
  recordRecipientSend,
} from './outbox.repository.js';

export { MAIL_LOCALES, type MailLocale } from './mail-locales.js';

export interface MailMessage {
  /** What it is about, for the operator: `email_verification`, `password_reset`… */
  kind: string;
  /**
   * The account the message is about. When given, at most MAIL_LIMIT_PER_HOUR messages of this
   * kind about it, and MAIL_LIMIT_PER_ADDRESS_PER_HOUR to its recipient, are queued per hour; the
   * rest are not queued.
   */
  userId?: number;
  /**
   * The hourly budget of this kind, for the account and for the address alike, when the kind is
   * bounded by its own cause (an owner's change of an application, which DEVELOPER_CHANGES_PER_HOUR
   * limits) rather than by a form anyone may submit; else MAIL_LIMIT_PER_HOUR and
   * MAIL_LIMIT_PER_ADDRESS_PER_HOUR.
   */
  perHour?: number;
  to: string;
  locale: MailLocale;
  subject: string;
  /** The plain-text part; its links are absolute under PUBLIC_URL. */
  text: string;
  /** The HTML part, with the same links. */
  html: string;
}

const MAX_BODY_LENGTH = 100_000;

/** At most 5 messages of each kind per account per hour. */
export const MAIL_LIMIT_PER_HOUR = 5;
/**
 * At most 5 messages of each kind per recipient address per hour, whatever accounts they are
 * about: twelve accounts naming one address cannot send it twelve verifications or resets.
 */
export const MAIL_LIMIT_PER_ADDRESS_PER_HOUR = 5;
const HOUR_MS = 3600 * 1000;

/**
 * The form of an address its limit is counted under: trimmed and lower-cased whole (RFC 5321
 * §2.4 lets a host treat the local part as case-sensitive, but no mailbox provider we know does,
 * and a limit counted too widely only errs on the safe side), and without a `+tag` subaddress
 * (RFC 5233), which most providers deliver to the same inbox: `Ann+1@x` and `ann@x` are one
 * recipient. Dots in the local part are kept (only some providers ignore them). Used for counting
 * only; mail is always sent to the address as given.
 */
export function recipientKey(address: string): string {
  const normalised = address.trim().toLowerCase();
  const at = normalised.lastIndexOf('@');
  if (at <= 0) return normalised;
  const local = normalised.slice(0, at);
  const plus = local.indexOf('+');
  return plus > 0 ? `${local.slice(0, plus)}${normalised.slice(at)}` : normalised;
}

/**
 * Thrown inside a transaction whose message hit the account's limit, so that what the message
 * would have carried (a link that ends the older ones) rolls back with it.
 */
export class MailLimitReached extends Error {
  override name = 'MailLimitReached';
}

/** What became of a message handed to enqueueMail. */
export type Enqueued = { queued: true; id: number } | { queued: false; reason: 'limit' };

/** A caller's mistake in a message: a bug to fix, never something a user can cause. */
export class MailMessageError extends Error {
  override name = 'MailMessageError';
}

/** The href and src values of an HTML part. */
function htmlLinks(html: string): string[] {
  return [...html.matchAll(/\b(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)].map((match) =>
    (match[1] ?? match[2] ?? '').replace(/&amp;/g, '&'),
  );
}

/**
 * @throws MailMessageError when the message cannot be sent as it is: an address with a line break or
 * no `@`, an unknown language, an empty part, or a link that is not absolute under PUBLIC_URL
 * (a relative link is dead in a mail client; a foreign one has no place in our mail).
 */
export function checkMailMessage(ctx: Context, message: MailMessage): void {
  const problem = (text: string) => {
    throw new MailMessageError(`mail ${message.kind}: ${text}`);
  };
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(message.kind)) problem('kind must be a short snake_case word');
  if (message.to.length > 254 || !/^[^\s<>@,;"]+@[^\s<>@,;"]+$/.test(message.to))
    problem('the recipient must be one bare address');
  if (!(MAIL_LOCALES as readonly string[]).includes(message.locale)) problem('unknown locale');
  if (!message.subject.trim() || message.subject.length > 200 || /[\r\n]/.test(message.subject))
    problem('the subject must be one line of at most 200 characters');
  for (const part of [message.text, message.html]) {
    if (!part.trim() || part.length > MAX_BODY_LENGTH) problem('each part must hold 1 to 100000 characters');
  }
  const base = `${ctx.config.PUBLIC_URL}/`;
  for (const link of [...linksIn(message.text), ...htmlLinks(message.html)]) {
    if (link.startsWith('mailto:')) continue;
    if (!link.startsWith(base) && link !== ctx.config.PUBLIC_URL)
      problem('every link must be absolute under PUBLIC_URL');
  }
}

/**
 * Queues a message (the transactional outbox). Call it on the transaction of what
 * the message announces: the token it carries and the message are committed together or not at
 * all. The worker sends it after the commit; nothing here waits on SMTP. A message about an account
 * that already had MAIL_LIMIT_PER_HOUR of its kind in the last hour, or to an address that already
 * received MAIL_LIMIT_PER_ADDRESS_PER_HOUR of its kind (recipientKey), is not queued (`reason:
 * 'limit'`), so no form can be used to flood someone's inbox; the caller decides what to tell.
 * @throws MailMessageError (see checkMailMessage)
 */
export async function enqueueMail(
  trx: Kysely<Database>,
  ctx: Context,
  message: MailMessage,
): Promise<Enqueued> {
  checkMailMessage(ctx, message);
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - HOUR_MS);
  // A message about an account: its account's limit, then its address's (the locks always in
  // this order). Messages about no account (an operator's test) are not limited.
  if (message.userId !== undefined) {
    const recent = await countRecentMailLocked(trx, { userId: message.userId, kind: message.kind, since });
    if (recent >= (message.perHour ?? MAIL_LIMIT_PER_HOUR)) return { queued: false, reason: 'limit' };
    const recipientHash = hashSecret(recipientKey(message.to));
    const toAddress = await countRecentRecipientMailLocked(trx, { recipientHash, kind: message.kind, since });
    if (toAddress >= (message.perHour ?? MAIL_LIMIT_PER_ADDRESS_PER_HOUR))
      return { queued: false, reason: 'limit' };
    await recordRecipientSend(trx, {
      recipientHash,
      kind: message.kind,
      at: now,
      expiresAt: new Date(now.getTime() + HOUR_MS),
    });
  }
  const id = await insertMail(
    trx,
    {
      kind: message.kind,
      ...(message.userId !== undefined ? { userId: message.userId } : {}),
      recipient: message.to,
      locale: message.locale,
      subject: message.subject,
      text: message.text,
      html: message.html,
    },
    now,
  );
  return { queued: true, id };
}
