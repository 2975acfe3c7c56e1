import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { hashPassword, type PasswordProblem, passwordProblem } from '../../lib/password.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { recordAudit } from '../audit/audit.repository.js';
import { enqueueMail, MAIL_LIMIT_PER_HOUR, type MailLocale } from '../mail/mail.service.js';
import { endAccountAccess } from './account-access.service.js';
import {
  clearSignInAttempts,
  findPasswordResetRecipients,
  findUserById,
  findUserByUsername,
  lockUserById,
  markEmailVerified,
  updateUser,
} from './accounts.repository.js';
import { normalizeUsername, USERNAME_INPUT_MAX_LENGTH } from './accounts.schemas.js';
import {
  consumePasswordReset,
  endPendingPasswordResets,
  findLivePasswordReset,
  insertPasswordReset,
} from './password-resets.repository.js';
import { resetMail } from './reset-mail.js';
import { endBrowserSessions } from './session-end.service.js';
import type { User } from './user.js';

/** How long a reset link works (30 minutes). */
export const PASSWORD_RESET_TTL_MS = 30 * 60 * 1000;

/** The pages of recovery (fixed paths). */
export const PASSWORD_FORGOT_PATH = '/password/forgot';
export const PASSWORD_RESET_PATH = '/password/reset';

/** The longest `login` looked up: no username or address (RFC 5321 §4.5.3.1.3: 256) is longer. */
const LOGIN_MAX_LENGTH = 320;

/** Who asked for a link, for the audit log (`details`: more of the event, such as an operator's name). */
export interface ResetRequester {
  actor: string;
  via: string;
  ip: string | null;
  details?: Record<string, unknown>;
}

/**
 * Makes a reset link for each of `users` (who share the address `to`) and queues ONE message
 * carrying them all to that address, with an audit event per account, on one transaction: the
 * tokens and their message are committed together or not at all (the outbox). Only each token's
 * SHA-256 is stored. A newer link ends the older ones (password-resets.repository `liveLinks`), so
 * when the hourly limit of reset messages (the first account's, or the address's) is reached no
 * link is made either: undefined, and the links already sent keep working.
 */
async function sendPasswordReset(
  db: Kysely<Database>,
  ctx: Context,
  users: readonly User[],
  to: string,
  locale: MailLocale,
  requester: ResetRequester,
): Promise<{ expiresAt: Date } | undefined> {
  const [first] = users;
  if (!first) return undefined;
  const links = users.map((user) => {
    const token = generateSecret('passwordReset');
    // `lang`: the page the link opens speaks the message's language.
    return {
      user,
      token,
      link: `${ctx.config.PUBLIC_URL}${PASSWORD_RESET_PATH}?token=${token}&lang=${locale}`,
    };
  });
  return inTransaction(db, async (trx) => {
    const at = ctx.clock.now();
    const message = resetMail({
      to,
      locale,
      accounts: links.map(({ user, link }) => ({ username: user.username, link })),
    });
    // One message about several accounts counts as the first one's; the address's own limit
    // (mail.service) bounds every account there, as each reset message goes to its address.
    if (!(await enqueueMail(trx, ctx, { ...message, userId: first.id })).queued) return undefined;
    const expiresAt = new Date(at.getTime() + PASSWORD_RESET_TTL_MS);
    for (const { user, token } of links) {
      await insertPasswordReset(trx, {
        tokenHash: hashSecret(token),
        userId: user.id,
        email: to,
        at,
        expiresAt,
      });
      await recordAudit(trx, {
        at,
        actor: requester.actor,
        action: 'password_reset_sent',
        subject: `user:${user.id}`,
        ip: requester.ip,
        details: {
          via: requester.via,
          ...requester.details,
          ...(links.length > 1 ? { accounts_in_message: links.length } : {}),
        },
      });
    }
    return { expiresAt };
  });
}

/** What `login` names: an address when it has an `@` (no username has one), else a username. */
function parseLogin(raw: string): { username: string } | { email: string } | undefined {
  if (raw.length > LOGIN_MAX_LENGTH) return undefined;
  const login = raw.trim();
  if (login.includes('@')) return { email: login };
  // Normalised as sign-in normalises it (accounts.service `authenticate`).
  const username = normalizeUsername(login);
  return username.length > 0 && username.length <= USERNAME_INPUT_MAX_LENGTH ? { username } : undefined;
}

/**
 * Which of the accounts holding one address (`holders`: neither deleted nor disabled) a reset
 * message to it may carry a link for (docs/pages.md `/password/forgot`): the one holder, confirmed
 * or not, when the address is its alone; when several accounts hold it, only those that confirmed
 * it (a confirmation whose claim is withheld still proves the mailbox). So an address someone put
 * on many accounts without confirming it receives nothing for them.
 */
function resettableHolders(holders: readonly User[]): User[] {
  return holders.length <= 1 ? [...holders] : holders.filter((holder) => holder.emailVerified);
}

/**
 * `/password/forgot`: ONE message to the address `login` names, listing each account there that
 * may be reset (resettableHolders), each with its own link; or, for a username, a message to that
 * account's address for that account alone, under the same rule. Returns how many links were sent;
 * the page never says it.
 */
export async function requestPasswordReset(
  db: Kysely<Database>,
  ctx: Context,
  input: { login: string; locale: MailLocale; ip: string | null },
): Promise<number> {
  const login = parseLogin(input.login);
  if (!login) return 0;
  let named: User | undefined;
  let address = 'email' in login ? login.email : undefined;
  if ('username' in login) {
    [named] = await findPasswordResetRecipients(db, login);
    address = named?.email ?? undefined;
  }
  if (address === undefined) return 0;
  const holders = await findPasswordResetRecipients(db, { email: address });
  const recipients = resettableHolders(holders).filter((user) => !named || user.id === named.id);
  const to = recipients[0]?.email;
  if (!to) return 0;
  const sent = await sendPasswordReset(db, ctx, recipients, to, input.locale, {
    actor: 'anonymous',
    via: 'forgot page',
    ip: input.ip,
  });
  return sent ? recipients.length : 0;
}

/**
 * `idp users send-reset U`: a reset link to the user's address, audited as the
 * operator's. Never returns the token.
 * @throws NotFound for an unknown user; InvalidRequest for a deleted or disabled one, or one without an address.
 */
export async function sendPasswordResetByOperator(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string; locale: MailLocale; requester?: ResetRequester },
): Promise<{ username: string; email: string; expires_at: string }> {
  const user = await findUserByUsername(db, input.username);
  if (!user) throw new NotFound(`no user named ${input.username}`);
  if (user.deletedAt) throw new InvalidRequest(`${user.username} was deleted: it has no password to reset`);
  if (user.disabledAt)
    throw new InvalidRequest(`${user.username} is disabled: enable it first (idp users enable)`);
  if (user.email === null)
    throw new InvalidRequest(
      `${user.username} has no e-mail address: set one first (idp users update --email)`,
    );
  const requester = input.requester ?? { actor: 'operator', via: 'cli', ip: null };
  const sent = await sendPasswordReset(db, ctx, [user], user.email, input.locale, requester);
  if (!sent)
    throw new InvalidRequest(
      `${user.username} was sent ${MAIL_LIMIT_PER_HOUR} reset links in the last hour: try again later`,
    );
  const { expiresAt } = sent;
  return { username: user.username, email: user.email, expires_at: expiresAt.toISOString() };
}

/**
 * A reset link works only while the account still has the address it was mailed to: whoever reads
 * a mailbox the account left (a change of address, an operator's edit) no longer holds its
 * recovery. The change itself also ends the links (email-verification.service `changeEmail`).
 */
function sentToCurrentAddress(link: { email: string }, user: { email: string | null }): boolean {
  return user.email !== null && user.email.toLowerCase() === link.email.toLowerCase();
}

/**
 * The account a reset link opens the form for, while the link works; reading changes nothing, so
 * a mail scanner opening the link uses nothing.
 */
export async function findPasswordResetAccount(
  db: Kysely<Database>,
  ctx: Context,
  token: string,
): Promise<{ username: string } | undefined> {
  const link = await findLivePasswordReset(db, { tokenHash: hashSecret(token), now: ctx.clock.now() });
  if (!link) return undefined;
  const user = await findUserById(db, link.userId);
  return user && !user.deletedAt && !user.disabledAt && sentToCurrentAddress(link, user)
    ? { username: user.username }
    : undefined;
}

/** The fields of the reset form. */
export type PasswordResetField = 'password' | 'passwordConfirm';
export type PasswordResetProblem = PasswordProblem | 'password_mismatch';

export type PasswordResetResult =
  | { ok: true; userId: number; username: string }
  | { ok: false; reason: 'link_invalid' }
  | { ok: false; reason: 'fields'; errors: Partial<Record<PasswordResetField, PasswordResetProblem>> };

/**
 * `/password/reset` POST. The new password is checked first and hashed before the
 * transaction (no row lock waits on argon2). Then, in one transaction: the link is used (atomically:
 * of two concurrent uses one wins), the password set, the address marked verified if the user still
 * has the one the link went to, every browser session deleted, every device of the mobile app
 * signed out, every app's access ended when `revokeApps`, and the `password_reset` audit event
 * written. The account's failed sign-in counts are cleared too: they were guesses at the old
 * password, and the owner, who just proved they hold the mailbox, can sign in at once.
 */
export async function resetPassword(
  db: Kysely<Database>,
  ctx: Context,
  input: { token: string; password: string; passwordConfirm: string; revokeApps: boolean; ip: string | null },
): Promise<PasswordResetResult> {
  const tokenHash = hashSecret(input.token);
  // A dead link costs no argon2 work and shows no form errors: only the error page.
  if (!(await findLivePasswordReset(db, { tokenHash, now: ctx.clock.now() })))
    return { ok: false, reason: 'link_invalid' };
  const problem = passwordProblem(input.password);
  if (problem) return { ok: false, reason: 'fields', errors: { password: problem } };
  if (input.passwordConfirm !== input.password)
    return { ok: false, reason: 'fields', errors: { passwordConfirm: 'password_mismatch' } };

  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx): Promise<PasswordResetResult> => {
    const at = ctx.clock.now();
    const link = await consumePasswordReset(trx, { tokenHash, now: at });
    if (!link) return { ok: false, reason: 'link_invalid' };
    // Locked: a disabling or deletion running now either finished first (and is seen) or waits.
    const user = await lockUserById(trx, link.userId);
    if (!user || user.deletedAt || user.disabledAt || !sentToCurrentAddress(link, user))
      return { ok: false, reason: 'link_invalid' };
    await updateUser(trx, user.id, { passwordHash, updatedAt: at });
    const addressVerified = await markEmailVerified(trx, { userId: user.id, email: link.email, at });
    const { sessionsEnded } = await endBrowserSessions(trx, ctx, { userId: user.id }, 'password_reset');
    const { devicesSignedOut, grantsRevoked: appsRevoked } = await endAccountAccess(trx, {
      userId: user.id,
      at,
      devices: true,
      apps: input.revokeApps,
    });
    // Links mailed before this one (already dead: only the newest works) and any other stay dead.
    await endPendingPasswordResets(trx, { userId: user.id, now: at });
    await clearSignInAttempts(trx, user.id);
    const self = `user:${user.id}`;
    await recordAudit(trx, {
      at,
      actor: self,
      action: 'password_reset',
      subject: self,
      ip: input.ip,
      details: {
        via: 'email link',
        sessions_ended: sessionsEnded,
        devices_signed_out: devicesSignedOut,
        apps_revoked: input.revokeApps,
        grants_revoked: appsRevoked,
        address_verified: addressVerified !== undefined,
      },
    });
    return { ok: true, userId: user.id, username: user.username };
  });
}
