import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { hashPassword, type PasswordProblem, passwordProblem } from '../../lib/password.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { recordAudit } from '../audit/audit.repository.js';
import { enqueueMail, MAIL_LIMIT_PER_HOUR, type MailLocale } from '../mail/mail.service.js';
import { signOutDevicesOfUser } from '../mobile/devices.service.js';
import { endAccess } from '../oauth/access.service.js';
import { deleteConsentsOfUser } from '../oauth/consents.repository.js';
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

/** Who asked for a link, for the audit log. */
interface ResetRequester {
  actor: string;
  via: string;
  ip: string | null;
}

/**
 * Makes a reset link for `user` and queues the message carrying it to the user's address, with
 * its audit event, on one transaction: the token and its message are committed together or not at
 * all (the outbox). Only the token's SHA-256 is stored. A newer link ends the
 * older ones (password-resets.repository `liveLinks`), so when the account's hourly limit of reset
 * messages is reached no link is made either: undefined, and the links
 * already sent keep working.
 */
async function sendPasswordReset(
  db: Kysely<Database>,
  ctx: Context,
  user: User & { email: string },
  locale: MailLocale,
  requester: ResetRequester,
): Promise<{ expiresAt: Date } | undefined> {
  const token = generateSecret('passwordReset');
  // `lang`: the page the link opens speaks the message's language.
  const link = `${ctx.config.PUBLIC_URL}${PASSWORD_RESET_PATH}?token=${token}&lang=${locale}`;
  return db.transaction().execute(async (trx) => {
    const at = ctx.clock.now();
    const message = resetMail({ to: user.email, username: user.username, locale, link });
    if (!(await enqueueMail(trx, ctx, { ...message, userId: user.id })).queued) return undefined;
    const expiresAt = new Date(at.getTime() + PASSWORD_RESET_TTL_MS);
    await insertPasswordReset(trx, {
      tokenHash: hashSecret(token),
      userId: user.id,
      email: user.email,
      at,
      expiresAt,
    });
    await recordAudit(trx, {
      at,
      actor: requester.actor,
      action: 'password_reset_sent',
      subject: `user:${user.id}`,
      ip: requester.ip,
      details: { via: requester.via },
    });
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
 * `/password/forgot`: every account `login` names (by username, or every account of
 * an address) that is neither deleted nor disabled and has an address gets its own reset link
 * there. Returns how many were sent; the page never says it.
 */
export async function requestPasswordReset(
  db: Kysely<Database>,
  ctx: Context,
  input: { login: string; locale: MailLocale; ip: string | null },
): Promise<number> {
  const login = parseLogin(input.login);
  if (!login) return 0;
  const users = await findPasswordResetRecipients(db, login);
  for (const user of users) {
    if (user.email === null) continue;
    await sendPasswordReset(db, ctx, { ...user, email: user.email }, input.locale, {
      actor: 'anonymous',
      via: 'forgot page',
      ip: input.ip,
    });
  }
  return users.length;
}

/**
 * `idp users send-reset U`: a reset link to the user's address, audited as the
 * operator's. Never returns the token.
 * @throws NotFound for an unknown user; InvalidRequest for a deleted or disabled one, or one without an address.
 */
export async function sendPasswordResetByOperator(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string; locale: MailLocale },
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
  const sent = await sendPasswordReset(db, ctx, { ...user, email: user.email }, input.locale, {
    actor: 'operator',
    via: 'cli',
    ip: null,
  });
  if (!sent)
    throw new InvalidRequest(
      `${user.username} was sent ${MAIL_LIMIT_PER_HOUR} reset links in the last hour: try again later`,
    );
  const { expiresAt } = sent;
  return { username: user.username, email: user.email, expires_at: expiresAt.toISOString() };
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
  return user && !user.deletedAt && !user.disabledAt ? { username: user.username } : undefined;
}

/** The fields of the reset form. */
export type PasswordResetField = 'password' | 'passwordConfirm';
export type PasswordResetProblem = PasswordProblem | 'password_mismatch';

export type PasswordResetResult =
  | { ok: true; username: string }
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
    if (!user || user.deletedAt || user.disabledAt) return { ok: false, reason: 'link_invalid' };
    await updateUser(trx, user.id, { passwordHash, updatedAt: at });
    const addressVerified = await markEmailVerified(trx, { userId: user.id, email: link.email, at });
    const { sessionsEnded } = await endBrowserSessions(trx, ctx, { userId: user.id }, 'password_reset');
    const devicesSignedOut = await signOutDevicesOfUser(trx, user.id, at);
    let appsRevoked = 0;
    if (input.revokeApps) {
      appsRevoked = (await endAccess(trx, { userId: user.id }, at)).grantsRevoked;
      // Each app must be allowed again (as the form says): no consent is remembered.
      await deleteConsentsOfUser(trx, user.id);
    }
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
        address_verified: addressVerified,
      },
    });
    return { ok: true, username: user.username };
  });
}
