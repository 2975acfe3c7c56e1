import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import {
  deleteMobilePendingSignInsOfUser,
  deletePendingSignInsOfUser,
} from '../mfa/pending-sign-ins.repository.js';
import { signOutDevicesOfUser } from '../mobile/devices.service.js';
import { endAccess } from '../oauth/access.service.js';
import { deleteConsentsOfUser } from '../oauth/consents.repository.js';

/**
 * What a new password ends besides browser sessions, on the caller's transaction; the reset and
 * the password change (`/account/password`) both call it, so both end the same things: every
 * password step still waiting for its second factor (a browser's or the app's: it proved the old
 * password, which proves nothing now), every device of the mobile app (`devices`) and every app's
 * access, whose consent is forgotten so each app must be allowed again (`apps`).
 */
export async function endAccountAccess(
  trx: Kysely<Database>,
  input: { userId: number; at: Date; devices: boolean; apps: boolean },
): Promise<{ devicesSignedOut: number; grantsRevoked: number }> {
  await deletePendingSignInsOfUser(trx, input.userId);
  await deleteMobilePendingSignInsOfUser(trx, input.userId);
  const devicesSignedOut = input.devices ? await signOutDevicesOfUser(trx, input.userId, input.at) : 0;
  let grantsRevoked = 0;
  if (input.apps) {
    grantsRevoked = (await endAccess(trx, { userId: input.userId }, input.at)).grantsRevoked;
    await deleteConsentsOfUser(trx, input.userId);
  }
  return { devicesSignedOut, grantsRevoked };
}
