import { createRequire } from 'node:module';

/**
 * How many of the most common passwords are refused. They are the first entries of
 * the ranked `passwords-common` list of @zxcvbn-ts/language-common (MIT, maintained with zxcvbn-ts;
 * 49,233 entries in 4.1.3), most frequent first: "123456", "password", "12345678", "qwerty", ….
 */
export const COMMON_PASSWORDS_COUNT = 10_000;

type LanguageCommon = typeof import('@zxcvbn-ts/language-common');

let common: ReadonlySet<string> | undefined;

/**
 * The refused passwords, read on first use: decompressing the package's dictionaries takes about
 * 20 ms and a few MB, which only sign-up and password changes should pay, never a process that
 * only signs people in. `require` keeps the load synchronous, so the check needs no promise.
 */
export function commonPasswords(): ReadonlySet<string> {
  if (common) return common;
  const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as LanguageCommon;
  const ranked = dictionary['passwords-common'];
  // A future version with a shorter list would silently weaken the rule; fail loudly instead.
  if (ranked.length < COMMON_PASSWORDS_COUNT)
    throw new Error(`@zxcvbn-ts/language-common lists only ${ranked.length} passwords`);
  common = new Set(ranked.slice(0, COMMON_PASSWORDS_COUNT));
  return common;
}

/**
 * Whether a password is among the most common. The list is all lower case (zxcvbn folds case
 * before its dictionary lookup), so the password is lower-cased too: "Password1" and "PASSWORD1"
 * are as guessable as "password1", since cracking tools try case variants first.
 */
export function isCommonPassword(password: string): boolean {
  return commonPasswords().has(password.toLowerCase());
}
