import type { Kysely, Updateable } from 'kysely';
import type { Config } from '../../config.js';
import type { Database, UsersTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import {
  hashPassword,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  verifyPassword,
} from '../../lib/password.js';
import { isUniqueViolation, parseInput } from '../../lib/validation.js';
import { endAccess } from '../oauth/access.service.js';
import { type UpdateProfileInput, updateProfileSchema } from '../profiles/profiles.schemas.js';
import {
  clearSignInAttempts,
  countSignInAttempt,
  deleteBrowserSessionsOfUser,
  findUserByUsername,
  insertUser,
  lockUserByUsername,
  type UserRow,
  updateUserColumns,
} from './accounts.repository.js';
import {
  type CreateUserInput,
  createUserSchema,
  emailSchema,
  normalizeUsername,
  passwordSchema,
  USERNAME_INPUT_MAX_LENGTH,
  USERNAME_PATTERN,
  usernameSchema,
} from './accounts.schemas.js';

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

/** Creates an account. The username is normalized; a case-insensitive duplicate is refused. */
export async function createUser(
  db: Kysely<Database>,
  clock: Clock,
  input: CreateUserInput,
): Promise<CreatedUser> {
  const data = parseInput(createUserSchema, input);
  const now = clock.now();
  try {
    const row = await insertUser(db, {
      username: data.username,
      password_hash: await hashPassword(data.password),
      email: data.email ?? null,
      email_verified: data.email ? data.emailVerified : false,
      display_name: data.displayName ?? null,
      verification_level: data.verificationLevel,
      created_at: now,
      updated_at: now,
    });
    return { id: row.id, username: row.username };
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsernameTaken(data.username);
    throw error;
  }
}

/**
 * Changes a user's profile (`idp users update`): only the given fields change. A new e-mail is
 * unconfirmed unless `emailVerified: true` comes with it; confirming needs an e-mail.
 * @throws NotFound when no user has this username (case-insensitive); InvalidRequest for bad input.
 */
export async function updateUserProfile(
  db: Kysely<Database>,
  clock: Clock,
  username: string,
  input: UpdateProfileInput,
): Promise<UserRow> {
  const data = parseInput(updateProfileSchema, input);
  return db.transaction().execute(async (trx) => {
    const user = await lockUserByUsername(trx, username);
    if (!user) throw new NotFound(`no user named ${username}`);

    const changes: Updateable<UsersTable> = {};
    if (data.displayName !== undefined) changes.display_name = data.displayName;
    if (data.avatarUrl !== undefined) changes.avatar_url = data.avatarUrl;
    if (data.verificationLevel !== undefined) changes.verification_level = data.verificationLevel;
    if (data.email !== undefined && data.email !== user.email) {
      // A new address has not been confirmed, whatever the old one was.
      changes.email = data.email;
      changes.email_verified = false;
    }
    if (data.emailVerified !== undefined) {
      if ((changes.email ?? user.email) === null)
        throw new InvalidRequest('email_verified needs an e-mail address, and this user has none');
      changes.email_verified = data.emailVerified;
    }
    if (data.clearGame) Object.assign(changes, { game_name: null, game_url: null });
    else if (data.gameName !== undefined && data.gameUrl !== undefined)
      Object.assign(changes, { game_name: data.gameName, game_url: data.gameUrl });
    if (data.clearTag) Object.assign(changes, { tag_label: null, tag_kind: null, tag_slug: null });
    else if (data.tagLabel !== undefined && data.tagKind !== undefined && data.tagSlug !== undefined)
      Object.assign(changes, { tag_label: data.tagLabel, tag_kind: data.tagKind, tag_slug: data.tagSlug });

    if (Object.keys(changes).length === 0) return user;
    return updateUserColumns(trx, user.id, { ...changes, updated_at: clock.now() });
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

function presentUserStatus(user: UserRow): UserStatusView {
  return {
    id: user.id,
    username: user.username,
    disabled: user.disabled_at !== null,
    disabled_at: user.disabled_at ? user.disabled_at.toISOString() : null,
  };
}

/**
 * Disables an account: it can no longer sign in, it leaves search, and every token of it stops
 * working at once (the token checks read `disabled_at`). Its grants are revoked and its browser
 * sessions deleted in the same transaction, so enabling the account later does not bring old
 * tokens or sessions back: a disabled account may have been a compromised one.
 * Idempotent: disabling again keeps the first `disabled_at`.
 * @throws NotFound when no user has this username.
 */
export function disableUser(db: Kysely<Database>, clock: Clock, username: string): Promise<UserStatusView> {
  return db.transaction().execute(async (trx) => {
    let user = await lockUserByUsername(trx, username);
    if (!user) throw new NotFound(`no user named ${username}`);
    if (user.disabled_at === null) {
      const now = clock.now();
      user = await updateUserColumns(trx, user.id, { disabled_at: now, updated_at: now });
    }
    await deleteBrowserSessionsOfUser(trx, user.id);
    await endAccess(trx, { userId: user.id }, clock.now());
    return presentUserStatus(user);
  });
}

/**
 * Enables a disabled account again (it can sign in and shows in search). Idempotent.
 * @throws NotFound when no user has this username.
 */
export function enableUser(db: Kysely<Database>, clock: Clock, username: string): Promise<UserStatusView> {
  return db.transaction().execute(async (trx) => {
    let user = await lockUserByUsername(trx, username);
    if (!user) throw new NotFound(`no user named ${username}`);
    if (user.disabled_at !== null) {
      user = await updateUserColumns(trx, user.id, { disabled_at: null, updated_at: clock.now() });
    }
    return presentUserStatus(user);
  });
}

/** The fields of the sign-up form. */
export type SignUpField = 'username' | 'password' | 'email';

/** What is wrong with a field of the sign-up form; the page says it in the reader's language. */
export type SignUpProblem =
  | 'username_format'
  | 'username_reserved'
  | 'username_taken'
  | 'password_too_short'
  | 'password_too_long'
  | 'email_invalid'
  | 'email_too_long';

export type SignUpResult =
  | { ok: true; user: CreatedUser }
  | { ok: false; errors: Partial<Record<SignUpField, SignUpProblem>> };

/**
 * Sign-up from the web form: every field is checked on its own (with the schemas every other way
 * in uses), so the page can show each problem next to its field; then the account is created as
 * `createUser` does (an empty e-mail is none).
 */
export async function signUp(
  db: Kysely<Database>,
  clock: Clock,
  form: { username: string; password: string; email: string },
): Promise<SignUpResult> {
  const errors: Partial<Record<SignUpField, SignUpProblem>> = {};
  if (!usernameSchema.safeParse(form.username).success) {
    errors.username = USERNAME_PATTERN.test(
      normalizeUsername(form.username.slice(0, USERNAME_INPUT_MAX_LENGTH)),
    )
      ? 'username_reserved'
      : 'username_format';
  }
  if (!passwordSchema.safeParse(form.password).success) {
    errors.password = form.password.length < PASSWORD_MIN_LENGTH ? 'password_too_short' : 'password_too_long';
  }
  const emailText = form.email.trim();
  if (emailText !== '') {
    const email = emailSchema.safeParse(emailText);
    if (!email.success)
      errors.email = email.error.issues.some((issue) => issue.code === 'too_big')
        ? 'email_too_long'
        : 'email_invalid';
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  try {
    const user = await createUser(db, clock, {
      username: form.username,
      password: form.password,
      email: emailText === '' ? undefined : emailText,
    });
    return { ok: true, user };
  } catch (error) {
    if (error instanceof UsernameTaken) return { ok: false, errors: { username: 'username_taken' } };
    throw error;
  }
}

export type SignInResult =
  | { ok: true; user: { id: number; username: string } }
  /** `wrong_credentials` for an unknown user and for a wrong password alike; `disabled` only with the right password. */
  | { ok: false; reason: 'wrong_credentials' | 'disabled' };

/**
 * Which budget of failed checks an attempt counts against, once its account is known: the source
 * of a browser or device that signed in to this account before (`device:…`, `mobile:…`), or
 * undefined for anyone else, who share the account's untrusted budget.
 */
export type TrustedSource = (userId: number) => string | undefined | Promise<string | undefined>;

/**
 * Checks a username and password. The username is NFKC-normalized (after its length is checked:
 * NFKC of megabytes costs a fraction of a second) and matched case-insensitively. Exactly one
 * argon2 verify runs whatever the outcome, against a dummy hash when the user is unknown, and no
 * answer waits longer than another, so neither the answer nor its time tells which usernames exist.
 * A disabled account is reported as such only to someone who knows its password.
 *
 * Brute force (OWASP, device cookies): each check of an account's password first takes a numbered
 * slot in the database (`countSignInAttempt`) in the budget of its source, so parallel guesses, on
 * one instance or several, cannot exceed `SIGN_IN_MAX_ATTEMPTS` per `SIGN_IN_WINDOW_SECONDS` in any
 * budget. Past that, that source is locked until the window ends: its password is not checked at
 * all and the answer is the one for a wrong password. A stranger who exhausts the untrusted budget
 * does not lock out the owner's browser or device, which counts in its own budget. The sign-in page
 * and the mobile app's verify share this function.
 */
export async function authenticate(
  db: Kysely<Database>,
  ctx: {
    clock: Clock;
    config: Pick<Config, 'SIGN_IN_MAX_ATTEMPTS' | 'SIGN_IN_WINDOW_SECONDS'>;
  },
  usernameInput: string,
  password: string,
  trustedSource?: TrustedSource,
): Promise<SignInResult> {
  const { config } = ctx;
  const username = usernameInput.length <= USERNAME_INPUT_MAX_LENGTH ? normalizeUsername(usernameInput) : '';
  const user =
    username.length > 0 && username.length <= USERNAME_INPUT_MAX_LENGTH
      ? await findUserByUsername(db, username)
      : undefined;
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
  const matches = await verifyPassword(checked ? user?.password_hash : undefined, checked ? password : '');
  if (!user || !matches) return { ok: false, reason: 'wrong_credentials' };
  await clearSignInAttempts(db, user.id, source);
  if (user.disabled_at !== null) return { ok: false, reason: 'disabled' };
  return { ok: true, user: { id: user.id, username: user.username } };
}
