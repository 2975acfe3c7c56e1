import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { type PasswordProblem, passwordProblem } from '../../lib/password.js';
import { isUsernameTaken } from './accounts.repository.js';
import {
  emailSchema,
  normalizeUsername,
  USERNAME_INPUT_MAX_LENGTH,
  USERNAME_PATTERN,
  usernameSchema,
} from './accounts.schemas.js';
import { type CreatedUser, createUser, UsernameTaken } from './accounts.service.js';
import type { User } from './user.js';

/** The fields of the sign-up form. */
export type SignUpField = 'username' | 'password' | 'email';

/** What is wrong with a field of the sign-up form; the page says it in the reader's language. */
export type SignUpProblem =
  | 'username_format'
  | 'username_reserved'
  | 'username_taken'
  | PasswordProblem
  | 'email_invalid'
  | 'email_too_long';

type SignUpErrors = Partial<Record<SignUpField, SignUpProblem>>;
export type SignUpResult = { ok: true; user: CreatedUser } | { ok: false; errors: SignUpErrors };

/**
 * What is wrong with a new username before the database is asked: its shape, or a reserved name
 * (a confusable of one is refused by the unique index on its skeleton, as taken). Every way an
 * account is made (sign-up, a first sign-in through a provider) asks this.
 */
export function usernameFormatProblem(username: string): 'username_format' | 'username_reserved' | undefined {
  if (usernameSchema.safeParse(username).success) return undefined;
  return USERNAME_PATTERN.test(normalizeUsername(username.slice(0, USERNAME_INPUT_MAX_LENGTH)))
    ? 'username_reserved'
    : 'username_format';
}

/** The problems of the form's fields, each checked on its own; a taken username is looked up last. */
async function signUpProblems(
  db: Kysely<Database>,
  form: { username: string; password: string; email: string },
): Promise<SignUpErrors> {
  const errors: SignUpErrors = {};
  const username = usernameFormatProblem(form.username);
  if (username) errors.username = username;
  const password = passwordProblem(form.password);
  if (password) errors.password = password;
  const emailText = form.email.trim();
  if (emailText !== '') {
    const email = emailSchema.safeParse(emailText);
    if (!email.success)
      errors.email = email.error.issues.some((issue) => issue.code === 'too_big')
        ? 'email_too_long'
        : 'email_invalid';
  }
  // Every problem in one round: a form refused for its password also says that the username is
  // taken (as the unique indexes would: a name like another, a deleted account's), rather than only
  // once the password is fixed. The indexes still decide when the form has no other problem.
  if (!errors.username && Object.keys(errors).length > 0) {
    if (await isUsernameTaken(db, normalizeUsername(form.username))) errors.username = 'username_taken';
  }
  return errors;
}

/** Sign-up from the web form: each field checked on its own, so the page shows each problem by it. */
export async function signUp(
  db: Kysely<Database>,
  ctx: Context,
  form: { username: string; password: string; email: string },
  then?: (trx: Kysely<Database>, user: User) => Promise<void>,
): Promise<SignUpResult> {
  const errors = await signUpProblems(db, form);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  try {
    const emailText = form.email.trim();
    const email = emailText === '' ? undefined : emailText;
    const user = await createUser(db, ctx, { username: form.username, password: form.password, email }, then);
    return { ok: true, user };
  } catch (error) {
    if (error instanceof UsernameTaken) return { ok: false, errors: { username: 'username_taken' } };
    throw error;
  }
}
