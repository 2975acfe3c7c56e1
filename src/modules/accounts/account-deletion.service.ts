import type { Kysely, Transaction } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { isPasswordHash } from '../../lib/password.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail.service.js';
import { deleteMailOfUser } from '../mail/outbox.repository.js';
import { removeSecondFactors } from '../mfa/second-factor.service.js';
import { endAccess } from '../oauth/access.service.js';
import { deleteConsentsOfUser } from '../oauth/consents.repository.js';
import { deletePeriodsOfUser } from '../premium/premium.repository.js';
import { deleteLinksOfUser } from '../upstream/links.repository.js';
import { enqueueAccountNotice } from './account-notice-mail.js';
import {
  clearSignInAttempts,
  findCredentials,
  findUserById,
  lockUserByUsername,
  updateUser,
} from './accounts.repository.js';
import { authenticate, type TrustedSource } from './accounts.service.js';
import { deleteEmailVerificationsOfUser } from './email-verification.repository.js';
import { deletePasswordResetsOfUser } from './password-resets.repository.js';
import { endBrowserSessions } from './session-end.service.js';
import type { User } from './user.js';

/**
 * What a deleted account keeps as its password hash: not an argon2 encoding, so no password ever
 * verifies against it (argon2.verify refuses it), and sign-in does not even read it: a deleted
 * account's credentials are not found (accounts.repository `findCredentials`).
 */
const NO_PASSWORD = '!deleted';

export type DeleteAccountResult = { ok: true } | { ok: false; reason: 'wrong_password' };

/**
 * Deletes the signed-in user's account once their password is confirmed (docs/pages.md
 * "The account's data"). The password goes through `authenticate`, so a wrong guess counts against the
 * account's budget like a sign-in. Then, in one transaction: every browser session, grant, token,
 * code and device of the mobile app ends; consents, premium periods and second factors are deleted; the profile is
 * cleared and the password replaced by one nothing verifies; and the user is marked deleted and
 * disabled, so every check that refuses a disabled user (tokens, sign-in, search, sessions) refuses
 * them. The row stays: the username (and its skeleton) stays reserved, and the wallet and its
 * ledger entries (financial records, append-only) still reference it, now with no personal data.
 */
export async function deleteAccount(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    userId: number;
    password: string;
    /** For an account without a password (made through a provider): its username, typed. */
    typedUsername?: string;
    trustedSource?: TrustedSource;
    ip: string | null;
    locale?: MailLocale;
  },
): Promise<DeleteAccountResult> {
  const user = await findUserById(db, input.userId);
  if (!user || user.deletedAt) return { ok: false, reason: 'wrong_password' };
  const credentials = await findCredentials(db, user.username);
  if (credentials && !isPasswordHash(credentials.passwordHash)) {
    // No password to ask for: the caller's recent re-authentication (through the provider) is the
    // proof, and the typed username the confirmation, as GitHub asks for a repository's name.
    if ((input.typedUsername ?? '').trim().toLowerCase() !== user.username.toLowerCase())
      return { ok: false, reason: 'wrong_password' };
  } else {
    const check = await authenticate(db, ctx, {
      username: user.username,
      password: input.password,
      ...(input.trustedSource ? { trustedSource: input.trustedSource } : {}),
    });
    if (!check.ok || check.user.id !== user.id) return { ok: false, reason: 'wrong_password' };
  }

  return db.transaction().execute(async (trx) => {
    // Locked, and read again: a concurrent deletion or disabling finds it done.
    const locked = await lockUserByUsername(trx, user.username);
    if (!locked || locked.id !== user.id || locked.deletedAt) return { ok: false, reason: 'wrong_password' };
    const at = ctx.clock.now();
    const erased = await eraseAccount(trx, ctx, locked, input.locale ?? 'en');
    const self = `user:${user.id}`;
    await recordAudit(trx, {
      at,
      actor: self,
      action: 'account_deleted',
      subject: self,
      ip: input.ip,
      details: { via: 'account page', ...erased },
    });
    return { ok: true };
  });
}

/** What erasing an account ended and deleted, for its audit event. */
export interface AccountErased {
  sessions_ended: number;
  grants_revoked: number;
  consents_deleted: number;
  premium_periods_deleted: number;
  passkeys_deleted: number;
  provider_links_deleted: number;
  messages_deleted: number;
  second_factors_removed: boolean;
}

/**
 * The deletion itself, in the caller's transaction with `locked` (the user, locked, not yet
 * deleted): the account's own page after its password, or an operator's console. Every browser
 * session, grant, token, code and device of the mobile app ends; consents, premium periods and second
 * factors are deleted; the profile is cleared and the password replaced by one nothing verifies; and
 * the user is marked deleted and disabled. The caller records the audit event.
 */
export async function eraseAccount(
  trx: Transaction<Database>,
  ctx: Context,
  locked: User,
  locale: MailLocale,
): Promise<AccountErased> {
  const at = ctx.clock.now();
  const userId = locked.id;
  const { sessionsEnded } = await endBrowserSessions(trx, ctx, { userId }, 'account_deleted');
  const { grantsRevoked } = await endAccess(trx, { userId }, at);
  const consentsDeleted = await deleteConsentsOfUser(trx, userId);
  const premiumPeriodsDeleted = await deletePeriodsOfUser(trx, userId);
  await clearSignInAttempts(trx, userId);
  // Links and messages carry the address and the name: they go with the profile.
  await deleteEmailVerificationsOfUser(trx, userId);
  await deletePasswordResetsOfUser(trx, userId);
  // docs/pages.md, §8: the account's second factors and passkeys (each a way in) go with it.
  const { totpRemoved, passkeysRemoved } = await removeSecondFactors(trx, userId);
  const providerLinksRemoved = await deleteLinksOfUser(trx, userId);
  const messagesDeleted = await deleteMailOfUser(trx, userId);
  // The last message to the address, read before the profile is cleared.
  await enqueueAccountNotice(trx, ctx, { user: locked, notice: 'account_deleted', locale });
  await updateUser(trx, userId, {
    displayName: null,
    avatarUrl: null,
    gameName: null,
    gameUrl: null,
    tagLabel: null,
    tagKind: null,
    tagSlug: null,
    email: null,
    emailVerified: false,
    verificationLevel: 0,
    passwordHash: NO_PASSWORD,
    disabledAt: locked.disabledAt ?? at,
    deletedAt: at,
    updatedAt: at,
  });
  return {
    sessions_ended: sessionsEnded,
    grants_revoked: grantsRevoked,
    consents_deleted: consentsDeleted,
    premium_periods_deleted: premiumPeriodsDeleted,
    passkeys_deleted: passkeysRemoved,
    provider_links_deleted: providerLinksRemoved,
    messages_deleted: messagesDeleted,
    second_factors_removed: totpRemoved,
  };
}
