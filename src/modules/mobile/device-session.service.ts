import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidRequest } from '../../lib/errors.js';
import { hashSecret } from '../../lib/secrets.js';
import { isUniqueViolation } from '../../lib/validation.js';
import type { TrustedSource } from '../accounts/sign-in-result.js';
import { insertGrant } from '../oauth/grants.repository.js';
import { hasSignedInBefore, insertDevice, lockLiveDevice } from './mobile.repository.js';
import { MOBILE_SCOPES, type SessionResponse } from './mobile.schemas.js';
import { sessionResponse, signOut } from './mobile.service.js';

/** 400 `invalid_request`: verify with a device_id that another account is signed in on. */
class DeviceOfAnotherAccount extends InvalidRequest {
  constructor() {
    super(
      'This device_id is signed in to another account: sign that account out on the device (mobile logout) first.',
    );
  }
}

/**
 * The budget a device's checks count against: one that signed in to the account before with this
 * key has its own (the app's device cookie, OWASP); any other shares the account's untrusted one.
 */
export function knownDevice(
  db: Kysely<Database>,
  device: { clientPk: number; deviceId: string; publicKey: string },
): TrustedSource {
  return async (userId) =>
    (await hasSignedInBefore(db, { ...device, userId }))
      ? `mobile:${hashSecret(`${device.clientPk}.${device.deviceId}`)}`
      : undefined;
}

/**
 * Registers the device's key for the user and starts its session, in one transaction: `claim`
 * (the second step's single use) runs first in it, and nothing happens unless it holds. A device
 * is bound to the account signed in on it.
 * @throws InvalidRequest when another account is signed in on this device_id.
 */
export async function startDeviceSession(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    clientPk: number;
    deviceId: string;
    publicKey: string;
    userId: number;
    label: string;
    now: Date;
    claim?: (trx: Kysely<Database>) => Promise<void>;
  },
): Promise<SessionResponse> {
  const { clientPk, deviceId, userId, now } = input;
  const start = () =>
    db.transaction().execute(async (trx) => {
      await input.claim?.(trx);
      const previous = await lockLiveDevice(trx, { clientPk, deviceId });
      // A device is bound to the account signed in on it: another account cannot take it over
      // (which would sign its owner out) until it is signed out.
      if (previous && previous.userId !== userId) throw new DeviceOfAnotherAccount();
      if (previous) await signOut(trx, previous, now);
      const grant = await insertGrant(trx, {
        userId,
        clientPk,
        scopes: MOBILE_SCOPES,
        codeHash: null,
        authTime: now,
        at: now,
      });
      await insertDevice(trx, {
        clientPk,
        deviceId,
        userId,
        publicKey: input.publicKey,
        grantId: grant.id,
        label: input.label,
        at: now,
      });
      return sessionResponse(trx, ctx, { grantId: grant.id, userId, clientPk });
    });
  try {
    return await start();
  } catch (error) {
    // Two sign-ins of one device at once: the second found no registration to replace, then lost
    // the race on the unique index. Once more, it replaces the first.
    if (!isUniqueViolation(error)) throw error;
    return start();
  }
}
