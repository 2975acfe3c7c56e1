import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { findTotpCredential } from '../mfa/totp.repository.js';
import { hasPasskey } from '../passkeys/passkeys.repository.js';

/*
 * The sign-in policy every door shares: whether an account has a second factor. Its own module,
 * below both accounts (whose `authenticate` checks every password) and mfa (whose second step
 * checks every code), so that each decides by the same rule without importing the other.
 */

/** Which second factors the user has (a TOTP key only once confirmed). */
export async function secondFactorsOf(
  db: Kysely<Database>,
  userId: number,
): Promise<{ totp: boolean; passkey: boolean }> {
  const totp = await findTotpCredential(db, userId);
  return { totp: totp?.confirmedAt != null, passkey: await hasPasskey(db, userId) };
}

/**
 * Whether the user has a second factor (a confirmed TOTP key or a passkey), so that a password
 * alone neither signs them in nor gives back their budget of failed checks. The one place that
 * decides it.
 */
export async function hasSecondFactor(db: Kysely<Database>, userId: number): Promise<boolean> {
  const factors = await secondFactorsOf(db, userId);
  return factors.totp || factors.passkey;
}
