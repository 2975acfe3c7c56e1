import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidGrant } from '../../lib/errors.js';
import { authenticate } from '../accounts/accounts.service.js';
import type { Client } from '../clients/client.js';
import { knownDevice, startDeviceSession } from './device-session.service.js';
import type { MfaRequiredResponse, SessionResponse, VerifyBody } from './mobile.schemas.js';
import { REFUSED, signedByKey, useChallenge } from './mobile.service.js';
import { startMobileSecondStep } from './second-step.service.js';

/** What verify answers: a session, or (for an account with a second factor) the second step to take. */
export type VerifyOutcome =
  | { kind: 'session'; session: SessionResponse; userId: number }
  | { kind: 'mfa_required'; body: MfaRequiredResponse; userId: number };

/**
 * POST /api/v1/mobile/verify: the challenge is used up first (so every password guess costs a
 * fresh challenge), then the device's signature and the password are checked. For an account with
 * a second factor the right password starts the second step (an `mfa_…` token bound to this
 * device's key) and nothing more. Otherwise the key is registered for this device and user,
 * replacing any earlier registration of the device (whose tokens stop working), and a session starts.
 * @throws InvalidGrant for an unknown, used, expired or foreign challenge, a bad signature, or a
 * wrong password, all with the same description.
 */
export async function verifyDevice(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  input: VerifyBody,
  label: string,
): Promise<VerifyOutcome> {
  const now = await useChallenge(db, ctx, client, input);
  if (!signedByKey(input.public_key, input.signature, input.challenge, input.device_id)) {
    throw new InvalidGrant(REFUSED);
  }
  const device = { clientPk: client.id, deviceId: input.device_id, publicKey: input.public_key };
  // The signature proved this request holds the key sent: a device that signed in to the account
  // with that key before counts its failures in a budget of its own.
  const signIn = await authenticate(db, ctx, {
    username: input.username,
    password: input.password,
    trustedSource: knownDevice(db, device),
  });
  if (!signIn.ok) throw new InvalidGrant(REFUSED);
  if (signIn.secondFactor) {
    const body = await startMobileSecondStep(db, ctx, { ...device, userId: signIn.user.id });
    return { kind: 'mfa_required', body, userId: signIn.user.id };
  }
  const session = await startDeviceSession(db, ctx, { ...device, userId: signIn.user.id, label, now });
  return { kind: 'session', session, userId: signIn.user.id };
}
