import { randomInt } from 'node:crypto';

/*
 * RFC 8628 §6.1: a user code easy to type and hard to guess. Twenty consonants (no vowels, so no
 * words; none of the look-alikes 0/O, 1/I/L, 5/S… since there are no digits and no A, E, I, O, U,
 * Y), eight of them shown in two groups of four (BCDF-GHJK): 20^8 ≈ 2^34.6 codes, against a guess budget of a few
 * hundred per minute for the whole service and a code life of 10 minutes.
 */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;

/** A new user code, two groups of four letters (`BCDF-GHJK`). */
export function generateUserCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * The code as typed, in its one stored form: case, spaces and dashes ignored (RFC 8628 §6.1);
 * null when it cannot be a user code (wrong letters or length), so it costs no lookup.
 */
export function normalizeUserCode(typed: string): string | null {
  if (typed.length > 64) return null;
  const letters = typed.toUpperCase().replace(/[\s-]/g, '');
  if (letters.length !== LENGTH) return null;
  for (const letter of letters) if (!ALPHABET.includes(letter)) return null;
  return letters;
}

/** A normalised code in its two groups of four, as the pages show it. */
export function formatUserCode(normalised: string): string {
  return `${normalised.slice(0, 4)}-${normalised.slice(4)}`;
}
