import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidRequest } from '../../lib/errors.js';
import type { Client } from '../clients/client.js';
import { listLiveDevices, lockLiveDevice, lockLiveDeviceOfUser } from './mobile.repository.js';
import type { LogoutBody } from './mobile.schemas.js';
import { signOut } from './mobile.service.js';

/**
 * POST /api/v1/mobile/logout: the device of this access token signs out; its tokens and its key
 * stop working at once.
 * @throws InvalidRequest when device_id is not the device this token was issued to.
 */
export async function logoutDevice(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  token: { grantId: number; userId: number },
  input: LogoutBody,
): Promise<{ ok: true }> {
  const now = ctx.clock.now();
  await db.transaction().execute(async (trx) => {
    const device = await lockLiveDevice(trx, { clientPk: client.id, deviceId: input.device_id });
    if (!device || device.grantId !== token.grantId || device.userId !== token.userId) {
      throw new InvalidRequest('device_id is not the device this access token was issued to.');
    }
    await signOut(trx, device, now);
  });
  return { ok: true };
}

/** The account page's list of the user's signed-in devices. */
export async function listSignedInDevices(
  db: Kysely<Database>,
  userId: number,
): Promise<Array<{ id: number; label: string; signedInAt: Date; lastUsedAt: Date }>> {
  const devices = await listLiveDevices(db, userId);
  return devices.map((device) => ({
    id: device.id,
    label: device.label,
    signedInAt: device.createdAt,
    lastUsedAt: device.lastUsedAt,
  }));
}

/** The account page's "sign out" of one device: false when it is not one of the user's live devices. */
export async function signOutDevice(
  db: Kysely<Database>,
  input: { userId: number; deviceId: number; at: Date },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const device = await lockLiveDeviceOfUser(trx, input.userId, input.deviceId);
    if (!device) return false;
    await signOut(trx, device, input.at);
    return true;
  });
}

/**
 * Signs out every device of the mobile app of a user (a password reset): each
 * device's key and the tokens of its grant stop working. Run it in the transaction of the change
 * it follows. Returns how many devices were signed in.
 */
export async function signOutDevicesOfUser(trx: Kysely<Database>, userId: number, at: Date): Promise<number> {
  const devices = await listLiveDevices(trx, userId);
  for (const device of devices) await signOut(trx, device, at);
  return devices.length;
}
