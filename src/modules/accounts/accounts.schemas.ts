import { z } from 'zod';
import { PASSWORD_PROBLEM_MESSAGES, passwordProblem } from '../../lib/password.js';

/**
 * Usernames: 3–32 characters of ASCII letters, digits and underscore, not only digits, unique
 * case-insensitively. Input is NFKC-normalized first, so full-width "Ａｌｉｃｅ" becomes "Alice".
 * ASCII only, because two accounts must never look the same: Unicode letters bring confusables
 * (Latin "a" and Cyrillic "а"); display names carry any script instead.
 */
export const USERNAME_PATTERN = /^(?!\d+$)[A-Za-z0-9_]{3,32}$/;

/** Names that would collide with the service's own paths (a profile lives at `/<username>`) or mislead. */
const RESERVED_USERNAMES = new Set([
  'about',
  'account',
  'accounts',
  'admin',
  'administrator',
  'api',
  'assets',
  'auth',
  'health',
  'help',
  'idp',
  'login',
  'logout',
  'me',
  'metrics',
  'null',
  'oauth',
  'root',
  'security',
  'settings',
  'signin',
  'signout',
  'signup',
  'static',
  'status',
  'support',
  'system',
  'undefined',
  'well_known',
]);

export function normalizeUsername(raw: string): string {
  return raw.normalize('NFKC').trim();
}

/** Longer input cannot be a username (32 characters after NFKC, which may expand a character). */
export const USERNAME_INPUT_MAX_LENGTH = 128;

export const usernameSchema = z
  .string()
  // Bounded before NFKC, which takes a fraction of a second on a megabyte.
  .max(USERNAME_INPUT_MAX_LENGTH, 'username must be 3–32 characters of letters a–z, digits and _')
  .transform(normalizeUsername)
  .refine((value) => USERNAME_PATTERN.test(value), {
    message: 'username must be 3–32 characters of letters a–z, digits and _, and not only digits',
  })
  .refine((value) => !RESERVED_USERNAMES.has(value.toLowerCase()), { message: 'this username is reserved' });

/** A new password: the rules of lib/password.ts (length, then not a common one), nothing else. */
export const passwordSchema = z.string().superRefine((value, ctx) => {
  const problem = passwordProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: PASSWORD_PROBLEM_MESSAGES[problem] });
});

export const emailSchema = z
  .string()
  .trim()
  .max(254, 'email must be at most 254 characters')
  .pipe(z.email({ message: 'email must be a valid e-mail address' }));

/** Any script; NFC-normalized; no control or format characters; 1–64 characters. */
export const displayNameSchema = z
  .string()
  .transform((value) => value.normalize('NFC').trim().replace(/\s+/g, ' '))
  .refine((value) => value.length >= 1 && value.length <= 64, {
    message: 'display name must be 1–64 characters',
  })
  .refine((value) => !/[\p{Cc}\p{Cf}\p{Co}\p{Cn}]/u.test(value), {
    message: 'display name must not contain control or invisible characters',
  });

export const verificationLevelSchema = z.coerce
  .number({ message: 'verification level must be 0, 1 or 2' })
  .int('verification level must be 0, 1 or 2')
  .min(0, 'verification level must be 0, 1 or 2')
  .max(2, 'verification level must be 0, 1 or 2');

export const createUserSchema = z.object({
  username: usernameSchema,
  password: passwordSchema,
  email: emailSchema.optional(),
  emailVerified: z.boolean().default(false),
  displayName: displayNameSchema.optional(),
  verificationLevel: verificationLevelSchema.default(0),
});

export type CreateUserInput = z.input<typeof createUserSchema>;
