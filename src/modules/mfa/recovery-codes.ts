import { randomInt } from 'node:crypto';
import { hashSecret } from '../../lib/secrets.js';

/** docs/pages.md: 10 recovery codes at a time. */
export const RECOVERY_CODE_COUNT = 10;

/** Lower-case letters and digits that cannot be read as one another (no 0/o, 1/l/i). */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
/** 12 characters of a 31-letter alphabet: about 59 bits, far past guessing within the sign-in limits. */
const LENGTH = 12;

/** A new recovery code: three groups of four characters of ALPHABET joined by dashes (`k7mq-2v9c-x4tp`), from the CSPRNG. */
export function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code.match(/.{4}/g)?.join('-') ?? code;
}

/** A typed recovery code as stored: without spaces and dashes, lower case; null when it cannot be one. */
export function normalizeRecoveryCode(typed: string): string | null {
  const code = typed.replace(/[\s-]+/g, '').toLowerCase();
  return code.length === LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : null;
}

/** What is stored of a recovery code: the SHA-256 of its normalized form. */
export function recoveryCodeHash(normalized: string): string {
  return hashSecret(`recovery:${normalized}`);
}
