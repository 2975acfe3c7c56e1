import argon2 from 'argon2';
import { isCommonPassword } from './common-passwords.js';

/**
 * argon2id parameters: OWASP's first recommended setting (m = 19 MiB, t = 2, p = 1), which costs
 * about 30 ms per hash on one core here, so one core verifies well over 15 sign-ins per second.
 */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * Password length bounds, in UTF-16 code units as `String.length`, zod and HTML's
 * `minlength`/`maxlength` count them, so the form and the server agree. Longer passwords are
 * refused before hashing, so nobody can make the server hash megabytes.
 */
export const PASSWORD_MAX_LENGTH = 256;
export const PASSWORD_MIN_LENGTH = 8;

/** Why a new password is refused; the sign-up page shows it by the field under this key. */
export type PasswordProblem = 'password_too_short' | 'password_too_long' | 'password_too_common';

/** What each problem says outside the pages (the CLI, InvalidRequest messages). */
export const PASSWORD_PROBLEM_MESSAGES: Record<PasswordProblem, string> = {
  password_too_short: `password must be at least ${PASSWORD_MIN_LENGTH} characters`,
  password_too_long: `password must be at most ${PASSWORD_MAX_LENGTH} characters`,
  password_too_common: 'password is one of the 10,000 most common passwords; choose another',
};

/**
 * The rules every new password meets, in one place for every way a password is
 * set; sign-in never runs them. Length comes first, so the common-password lookup and any hashing
 * only ever see 8–256 characters.
 */
export function passwordProblem(password: string): PasswordProblem | undefined {
  if (password.length < PASSWORD_MIN_LENGTH) return 'password_too_short';
  if (password.length > PASSWORD_MAX_LENGTH) return 'password_too_long';
  if (isCommonPassword(password)) return 'password_too_common';
  return undefined;
}

/**
 * What `password_hash` holds for an account made through another provider's sign-in: no password
 * matches it (it is no argon2 hash), and the account's person may set one through a reset link.
 */
export const NO_PASSWORD = '!none';

/** Whether a stored hash is a password at all (not an account without one, nor a deleted one's). */
export function isPasswordHash(storedHash: string): boolean {
  return storedHash.startsWith('$argon2');
}

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

let dummyHash: Promise<string> | undefined;

/**
 * Verifies a password. With no stored hash (unknown user) it still runs one full verify against a
 * dummy hash, so the answer takes as long as for a real account and leaks nothing (no timing oracle).
 */
export async function verifyPassword(
  storedHash: string | null | undefined,
  password: string,
): Promise<boolean> {
  if (!storedHash) {
    dummyHash ??= argon2.hash('dummy password for unknown users', OPTIONS);
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  try {
    return await argon2.verify(storedHash, password);
  } catch {
    return false;
  }
}
