import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { COMMON_PASSWORDS_COUNT, commonPasswords, isCommonPassword } from '../../src/lib/common-passwords.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, passwordProblem } from '../../src/lib/password.js';

/** The package's whole ranked list, most common first, as the service reads it. */
const ranked: string[] = (
  createRequire(import.meta.url)('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common')
).dictionary['passwords-common'];

describe('the common-password list', () => {
  it('holds exactly the 10,000 highest-ranked passwords of the package', () => {
    const list = commonPasswords();
    expect(COMMON_PASSWORDS_COUNT).toBe(10_000);
    expect(list.size).toBe(10_000);
    expect([...list]).toEqual(ranked.slice(0, 10_000));
    // The next one down is not refused.
    expect(list.has(ranked[10_000] as string)).toBe(false);
  });

  it('is all lower case, which is why a password is compared lower-cased', () => {
    expect([...commonPasswords()].every((entry) => entry === entry.toLowerCase())).toBe(true);
  });
});

describe('passwordProblem', () => {
  // Checked in the package 4.1.3: rank 228 and 271 of its list.
  it.each(['password1', 'qwerty123', 'Password1', 'QWERTY123'])('refuses %s as too common', (password) => {
    expect(passwordProblem(password)).toBe('password_too_common');
  });

  it('refuses every listed password long enough to pass the length rule', () => {
    const eligible = ranked
      .slice(0, 10_000)
      .filter((entry) => entry.length >= PASSWORD_MIN_LENGTH && entry.length <= PASSWORD_MAX_LENGTH);
    expect(eligible.length).toBeGreaterThan(3000);
    for (const entry of eligible) expect(passwordProblem(entry)).toBe('password_too_common');
    // One with letters taken at random from the list, in upper case.
    const lettered = eligible.filter((entry) => /[a-z]/.test(entry));
    const pick = lettered[Math.floor(Math.random() * lettered.length)] as string;
    expect(passwordProblem(pick.toUpperCase())).toBe('password_too_common');
  });

  it.each(['correct horse battery staple', 'x7#kQ!p2', 'пароль-длинный', 'z'.repeat(PASSWORD_MAX_LENGTH)])(
    'accepts the rare %s',
    (password) => {
      expect(isCommonPassword(password)).toBe(false);
      expect(passwordProblem(password)).toBeUndefined();
    },
  );

  it('checks the length first, so a short or long listed password is refused for its length', () => {
    expect(ranked.indexOf('123456')).toBeLessThan(10_000);
    expect(passwordProblem('123456')).toBe('password_too_short');
    expect(passwordProblem('x7#kQ!p')).toBe('password_too_short');
    expect(passwordProblem('z'.repeat(PASSWORD_MAX_LENGTH + 1))).toBe('password_too_long');
    expect(passwordProblem('z'.repeat(1_000_000))).toBe('password_too_long');
  });
});
