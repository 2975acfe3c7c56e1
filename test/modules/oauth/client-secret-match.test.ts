import { describe, expect, it } from 'vitest';
import { hashesMatch, hashSecret } from '../../../src/lib/secrets.js';
import { clientSecretMatches, hashMatchesAny } from '../../../src/modules/oauth/client-secret-match.js';

const now = new Date('2026-06-01T12:00:00Z');
const later = new Date('2026-06-01T13:00:00Z');
const secret = (value: string, expiresAt: Date | null = null) => ({ hash: hashSecret(value), expiresAt });
const stored = [secret('sk_one'), secret('sk_two', later), secret('sk_three', now)];

/** The real constant-time comparison, with the stored hashes it was given. */
function counting() {
  const compared: string[] = [];
  const compare = (presented: string, hash: string) => {
    compared.push(hash);
    return hashesMatch(presented, hash);
  };
  return { compared, compare };
}

describe('clientSecretMatches', () => {
  it('accepts each secret valid now, and refuses one whose expiry has come, a wrong one and none', () => {
    expect(clientSecretMatches('sk_one', stored, now)).toBe(true);
    expect(clientSecretMatches('sk_two', stored, now)).toBe(true);
    expect(clientSecretMatches('sk_two', stored, later)).toBe(false);
    expect(clientSecretMatches('sk_three', stored, now)).toBe(false);
    expect(clientSecretMatches('sk_four', stored, now)).toBe(false);
    expect(clientSecretMatches('sk_one', [], now)).toBe(false);
    expect(clientSecretMatches('sk_one', undefined, now)).toBe(false);
  });

  it('compares the presented hash with every stored hash, whichever matches', () => {
    for (const [presented, expected] of [
      ['sk_one', true],
      ['sk_two', true],
      ['sk_three', false],
      ['sk_four', false],
    ] as const) {
      const { compared, compare } = counting();
      expect(hashMatchesAny(hashSecret(presented), stored, now, compare)).toBe(expected);
      expect(compared).toEqual(stored.map((s) => s.hash));
    }
  });

  it('compares with a dummy hash when the client is unknown or has no secret, as long as with one', () => {
    for (const none of [undefined, []]) {
      const { compared, compare } = counting();
      // Not even the dummy's own secret gets in.
      expect(hashMatchesAny(hashSecret('no such client'), none, now, compare)).toBe(false);
      expect(compared).toEqual([hashSecret('no such client')]);
    }
  });
});
