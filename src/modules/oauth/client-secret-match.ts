import { hashesMatch, hashSecret } from '../../lib/secrets.js';
import type { StoredSecret } from '../clients/clients.repository.js';

/** Compared against when the client is unknown or has no secret, so that answer takes as long as a wrong secret. */
const DUMMY: StoredSecret = { hash: hashSecret('no such client'), expiresAt: null };

/**
 * Whether `secret` is one of the client's secrets still valid at `now` (several are during a
 * rotation's overlap or when its owners added one). Each expiry is checked against `now` at every
 * request: a row kept in the client cache never stretches one.
 */
export function clientSecretMatches(
  secret: string,
  secrets: readonly StoredSecret[] | undefined,
  now: Date,
): boolean {
  // Hashed once: the token endpoint pays one SHA-256 however many hashes it is compared with.
  return hashMatchesAny(hashSecret(secret), secrets, now);
}

/**
 * Whether `presentedHash` is the hash of one of `secrets` valid at `now`, compared in constant
 * time (`compare`) with every stored hash, a match or not, so the time taken tells neither which
 * secret matched nor whether one did.
 */
export function hashMatchesAny(
  presentedHash: string,
  secrets: readonly StoredSecret[] | undefined,
  now: Date,
  compare: (presented: string, stored: string) => boolean = hashesMatch,
): boolean {
  const stored = secrets !== undefined && secrets.length > 0 ? secrets : [DUMMY];
  let matched = false;
  for (const candidate of stored) {
    const equal = compare(presentedHash, candidate.hash);
    const valid = candidate !== DUMMY && (candidate.expiresAt === null || now < candidate.expiresAt);
    // No short circuit: every hash is compared whatever the ones before it gave.
    matched = (equal && valid) || matched;
  }
  return matched;
}
