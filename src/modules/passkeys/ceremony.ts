import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { hashSecret } from '../../lib/secrets.js';
import { consumeChallenge, insertChallenge, type StoredChallenge } from './passkeys.repository.js';

/** How long a ceremony may take, and the timeout the browser is given. */
export const CEREMONY_TTL_MS = 5 * 60 * 1000;

/** The relying party (WebAuthn §5.1.4.1): the RP ID is PUBLIC_URL's host, the origin PUBLIC_URL's. */
export interface RelyingParty {
  id: string;
  origin: string;
}

/** The relying party of this service. */
export function relyingParty(config: Pick<Config, 'PUBLIC_URL'>): RelyingParty {
  const url = new URL(config.PUBLIC_URL);
  return { id: url.hostname, origin: url.origin };
}

/**
 * Remembers a ceremony under way: a new random ceremony id, which the browser keeps (an HttpOnly
 * cookie, so the challenge is bound to the browser that asked for it), and the challenge; only
 * their SHA-256 hashes are stored.
 */
export async function startCeremony(
  db: Kysely<Database>,
  ctx: Context,
  input: { challenge: string; purpose: StoredChallenge['purpose']; userId: number | null },
): Promise<string> {
  const ceremonyId = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  await insertChallenge(db, {
    ceremonyHash: hashSecret(ceremonyId),
    challengeHash: hashSecret(input.challenge),
    purpose: input.purpose,
    userId: input.userId,
    createdAt: now,
    expiresAt: new Date(now.getTime() + CEREMONY_TTL_MS),
  });
  return ceremonyId;
}

/**
 * Takes the ceremony the browser names, once (a replayed response finds nothing): undefined when
 * there is none of this purpose or it expired. Its `matches` compares a response's challenge with
 * the stored hash in constant time.
 */
export async function takeCeremony(
  db: Kysely<Database>,
  ctx: Context,
  input: { ceremonyId: string | undefined; purpose: StoredChallenge['purpose'] },
): Promise<(StoredChallenge & { matches: (challenge: string) => boolean }) | undefined> {
  if (!input.ceremonyId) return undefined;
  const stored = await consumeChallenge(db, {
    ceremonyHash: hashSecret(input.ceremonyId),
    purpose: input.purpose,
    now: ctx.clock.now(),
  });
  if (!stored) return undefined;
  const expected = Buffer.from(stored.challengeHash);
  return {
    ...stored,
    matches: (challenge) => {
      const presented = Buffer.from(hashSecret(challenge));
      return presented.length === expected.length && timingSafeEqual(presented, expected);
    },
  };
}

/**
 * The WebAuthn user handle of an account (WebAuthn §14.6.1: no personal data in it): the account
 * number, which the sign-in checks against the credential's owner.
 */
export function userHandleOf(userId: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(`u${userId}`, 'utf8'));
}

/** The user handle as a response carries it (base64url). */
export function encodedUserHandleOf(userId: number): string {
  return Buffer.from(userHandleOf(userId)).toString('base64url');
}
