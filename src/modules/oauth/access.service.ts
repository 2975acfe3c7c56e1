import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { deleteUnredeemedDeviceCodes } from '../device/device-codes.repository.js';
import { signOutDevicesOf } from '../mobile/mobile.repository.js';
import { deleteUnredeemedCodes } from './authorization-codes.repository.js';
import { revokeGrants } from './grants.repository.js';

/**
 * Ends what a user's or a client's access rests on (app revocation, a user or client disabled):
 * the app's devices signed in under it are signed out, every live grant is revoked (so all of its
 * tokens stop at once) and every code not yet redeemed (an authorization code, a device's request)
 * is deleted, so none can mint tokens later.
 * Run it in the transaction of the change it follows. At least one of `userId` and `clientPk`.
 */
export async function endAccess(
  trx: Kysely<Database>,
  where: { userId?: number; clientPk?: number },
  at: Date,
): Promise<{ grantsRevoked: number; codesDeleted: number }> {
  if (where.userId === undefined && where.clientPk === undefined)
    throw new Error('endAccess needs a user or a client');
  await signOutDevicesOf(trx, where, at);
  const grantsRevoked = await revokeGrants(trx, where, at);
  const codesDeleted = await deleteUnredeemedCodes(trx, where);
  // RFC 8628: a device's request the user allowed (or any of the client's) mints nothing later.
  await deleteUnredeemedDeviceCodes(trx, where);
  return { grantsRevoked, codesDeleted };
}
