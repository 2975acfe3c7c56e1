import type { Kysely, Transaction } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { hashPassword, PASSWORD_MAX_LENGTH, verifyPassword } from '../../lib/password.js';
import { isUniqueViolation, parseInput } from '../../lib/validation.js';
import { endAccess } from '../oauth/access.service.js';
import { type UpdateProfileInput, updateProfileSchema } from '../profiles/profiles.schemas.js';
import { hasSecondFactor } from '../sign-in-policy/sign-in-policy.service.js';
import {
  clearSignInAttempts,
  countSignInAttempt,
  findCredentials,
  insertUser,
  lockUserByUsername,
  type UserChanges,
  updateUser,
} from './accounts.repository.js';
import {
  type CreateUserInput,
  createUserSchema,
  normalizeUsername,
  USERNAME_INPUT_MAX_LENGTH,
} from './accounts.schemas.js';
import { endBrowserSessions } from './session-end.service.js';
import type { SignInResult, TrustedSource } from './sign-in-result.js';
import type { User } from './user.js';

export type { SignInResult, TrustedSource } from './sign-in-result.js';

/** 400 `invalid_request`: the username is taken (case-insensitively). The sign-up page shows it by the field. */
export class UsernameTaken extends InvalidRequest {
  constructor(username: string) {
    super(`username "${username}" is already taken`);
  }
}

export interface CreatedUser {
  id: number;
  username: string;
}

/**
 * Creates an account (a case-insensitive duplicate is refused); `then` runs in its transaction, for
 * what must be committed with it (a verification link).
 */
export async function createUser(
  db: Kysely<Database>,
  ctx: Context,
  input: CreateUserInput,
  then?: (trx: Kysely<Database>, user: User) => Promise<void>,
): Promise<CreatedUser> {
  const data = parseInput(createUserSchema, input);
  // Hashed before the transaction: no connection waits on argon2 (PGlite has only one).
  const passwordHash = await hashPassword(data.password);
  try {
    return await inTransaction(db, async (trx) => {
      const user = await insertUser(trx, {
        username: data.username,
        passwordHash,
        email: data.email ?? null,
        emailVerified: data.email ? data.emailVerified : false,
        displayName: data.displayName ?? null,
        verificationLevel: data.verificationLevel,
        at: ctx.clock.now(),
      });
      await then?.(trx, user);
      return { id: user.id, username: user.username };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsernameTaken(data.username);
    throw error;
  }
}

/** The user, locked until the transaction ends; a deleted one stays as it is. */
async function lockExistingUser(trx: Transaction<Database>, username: string): Promise<User> {
  const user = await lockUserByUsername(trx, username);
  if (!user) throw new NotFound(`no user named ${username}`);
  if (user.deletedAt)
    throw new InvalidRequest(`${user.username} was deleted: it cannot be enabled or changed`);
  return user;
}

/**
 * Changes a user's profile (`idp users update`): only the given fields change. A new e-mail is
 * unconfirmed unless `emailVerified: true` comes with it; confirming needs an e-mail.
 * @throws NotFound when no user has this username (case-insensitive); InvalidRequest for bad input.
 */
export async function updateUserProfile(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string } & UpdateProfileInput,
): Promise<User> {
  const { username, ...profile } = input;
  const data = parseInput(updateProfileSchema, profile);
  return db.transaction().execute(async (trx) => {
    const user = await lockExistingUser(trx, username);

    const changes: Omit<UserChanges, 'updatedAt'> = {};
    if (data.displayName !== undefined) changes.displayName = data.displayName;
    if (data.avatarUrl !== undefined) changes.avatarUrl = data.avatarUrl;
    if (data.verificationLevel !== undefined) changes.verificationLevel = data.verificationLevel;
    if (data.email !== undefined && data.email !== user.email) {
      // A new address has not been confirmed, whatever the old one was.
      changes.email = data.email;
      changes.emailVerified = false;
    }
    if (data.emailVerified !== undefined) {
      if ((changes.email ?? user.email) === null)
        throw new InvalidRequest('email_verified needs an e-mail address, and this user has none');
      changes.emailVerified = data.emailVerified;
    }
    if (data.clearGame) Object.assign(changes, { gameName: null, gameUrl: null });
    else if (data.gameName !== undefined && data.gameUrl !== undefined)
      Object.assign(changes, { gameName: data.gameName, gameUrl: data.gameUrl });
    if (data.clearTag) Object.assign(changes, { tagLabel: null, tagKind: null, tagSlug: null });
    else if (data.tagLabel !== undefined && data.tagKind !== undefined && data.tagSlug !== undefined)
      Object.assign(changes, { tagLabel: data.tagLabel, tagKind: data.tagKind, tagSlug: data.tagSlug });

    if (Object.keys(changes).length === 0) return user;
    return updateUser(trx, user.id, { ...changes, updatedAt: ctx.clock.now() });
  });
}

/** Whether an account is disabled, as `idp users disable` / `enable` print it. */
export interface UserStatusView {
  id: number;
  username: string;
  disabled: boolean;
  /** When it was disabled (ISO 8601), or null. */
  disabled_at: string | null;
}

function presentUserStatus(user: User): UserStatusView {
  return {
    id: user.id,
    username: user.username,
    disabled: user.disabledAt !== null,
    disabled_at: user.disabledAt ? user.disabledAt.toISOString() : null,
  };
}

/**
 * Disables an account: no sign-in, out of search, every token stops at once (the checks read
 * `disabled_at`). Grants and browser sessions end in the same transaction, so enabling it later
 * does not bring them back: a disabled account may have been a compromised one. Idempotent.
 * @throws NotFound when no user has this username.
 */
export function disableUser(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string },
): Promise<UserStatusView> {
  return setDisabled(db, ctx, input.username, true);
}

/** Enables a disabled account again. Idempotent. @throws NotFound; InvalidRequest when deleted. */
export function enableUser(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string },
): Promise<UserStatusView> {
  return setDisabled(db, ctx, input.username, false);
}

function setDisabled(
  db: Kysely<Database>,
  ctx: Context,
  username: string,
  disabled: boolean,
): Promise<UserStatusView> {
  // `db`'s transaction when it is one: the console records its audit event in the same one.
  return inTransaction(db, async (trx) => {
    let user = await lockExistingUser(trx, username);
    const now = ctx.clock.now();
    if ((user.disabledAt !== null) !== disabled)
      user = await updateUser(trx, user.id, { disabledAt: disabled ? now : null, updatedAt: now });
    if (disabled) {
      await endBrowserSessions(trx, ctx, { userId: user.id }, 'user_disabled');
      await endAccess(trx, { userId: user.id }, ctx.clock.now());
    }
    return presentUserStatus(user);
  });
}

/**
 * Checks a username and password (every door that takes one). Exactly one argon2 verify
 * runs whatever the outcome (a dummy hash for an unknown user), so neither the answer nor its time
 * tells which usernames exist; "disabled" is said only to someone who knows the password.
 * Brute force (OWASP device cookies): each check first takes a numbered slot in its source's
 * budget in the database, so parallel guesses on any number of instances stay within
 * SIGN_IN_MAX_ATTEMPTS per window; past it the password is not checked and the answer is "wrong".
 * A right password clears its source's count only for an account without a second factor.
 */
export async function authenticate(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    username: string;
    password: string;
    trustedSource?: TrustedSource;
  },
): Promise<SignInResult> {
  const { config } = ctx;
  const { password, trustedSource } = input;
  const username =
    input.username.length <= USERNAME_INPUT_MAX_LENGTH ? normalizeUsername(input.username) : '';
  const credentials =
    username.length > 0 && username.length <= USERNAME_INPUT_MAX_LENGTH
      ? await findCredentials(db, username)
      : undefined;
  const user = credentials?.user;
  const source = (user && (await trustedSource?.(user.id))) || '';
  const attempt = user
    ? await countSignInAttempt(
        db,
        { userId: user.id, source },
        ctx.clock.now(),
        config.SIGN_IN_WINDOW_SECONDS * 1000,
      )
    : 0;
  const locked = attempt > config.SIGN_IN_MAX_ATTEMPTS;
  // No account has a longer password (sign-up refuses it), and argon2 need not read megabytes.
  const checked = password.length <= PASSWORD_MAX_LENGTH && !locked;
  const matches = await verifyPassword(
    checked ? credentials?.passwordHash : undefined,
    checked ? password : '',
  );
  if (!user || !matches) return { ok: false, reason: 'wrong_credentials' };
  // Decided here for every door (sign-in page, mobile verify, password, e-mail, deletion and
  // re-authentication forms): for an account with a second factor the password is half of the
  // proof, and only a passed second factor clears the count (second-factor.service.ts), so that
  // entering the password again never gives new guesses at a code.
  const secondFactor = await hasSecondFactor(db, user.id);
  if (!secondFactor) await clearSignInAttempts(db, user.id, source);
  if (user.disabledAt !== null) return { ok: false, reason: 'disabled' };
  return { ok: true, user: { id: user.id, username: user.username }, secondFactor };
}
