import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidGrant, InvalidRequest } from '../../lib/errors.js';
import { hashSecret } from '../../lib/secrets.js';
import { isUniqueViolation } from '../../lib/validation.js';
import { authenticate } from '../accounts/accounts.service.js';
import type { Client } from '../clients/client.js';
import { insertGrant } from '../oauth/grants.repository.js';
import { hasSignedInBefore, insertDevice, lockLiveDevice } from './mobile.repository.js';
import { MOBILE_SCOPES, type SessionResponse, type VerifyBody } from './mobile.schemas.js';
import { REFUSED, sessionResponse, signedByKey, signOut, useChallenge } from './mobile.service.js';

/** 400 `invalid_request`: verify with a device_id that another account is signed in on. */
class DeviceOfAnotherAccount extends InvalidRequest {
  constructor() {
    super(
      'This device_id is signed in to another account: sign that account out on the device (mobile logout) first.',
    );
  }
}

/**
 * POST /api/v1/mobile/verify: the challenge is used up first (so every password guess costs a
 * fresh challenge), then the device's signature and the password are checked. On success the key
 * is registered for this device and user, replacing any earlier registration of the device (whose
 * tokens stop working), and a session starts.
 * @throws InvalidGrant for an unknown, used, expired or foreign challenge, a bad signature, or a
 * wrong password, all with the same description.
 */
export async function verifyDevice(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  input: VerifyBody,
  label: string,
): Promise<SessionResponse> {
  const now = await useChallenge(db, ctx, client, input);
  if (!signedByKey(input.public_key, input.signature, input.challenge, input.device_id)) {
    throw new InvalidGrant(REFUSED);
  }
  // The signature proved this request holds the key sent: a device that signed in to the account
  // with that key before counts its failures in a budget of its own (the app's device cookie).
  const signIn = await authenticate(db, ctx, {
    username: input.username,
    password: input.password,
    trustedSource: async (userId) =>
      (await hasSignedInBefore(db, {
        clientPk: client.id,
        deviceId: input.device_id,
        userId,
        publicKey: input.public_key,
      }))
        ? `mobile:${hashSecret(`${client.id}.${input.device_id}`)}`
        : undefined,
  });
  if (!signIn.ok) throw new InvalidGrant(REFUSED);

  const start = () =>
    db.transaction().execute(async (trx) => {
      const previous = await lockLiveDevice(trx, { clientPk: client.id, deviceId: input.device_id });
      // A device is bound to the account signed in on it: another account cannot take it over
      // (which would sign its owner out) until it is signed out.
      if (previous && previous.userId !== signIn.user.id) throw new DeviceOfAnotherAccount();
      if (previous) await signOut(trx, previous, now);
      const grant = await insertGrant(trx, {
        userId: signIn.user.id,
        clientPk: client.id,
        scopes: MOBILE_SCOPES,
        codeHash: null,
        authTime: now,
        at: now,
      });
      await insertDevice(trx, {
        clientPk: client.id,
        deviceId: input.device_id,
        userId: signIn.user.id,
        publicKey: input.public_key,
        grantId: grant.id,
        label,
        at: now,
      });
      return sessionResponse(trx, ctx, { grantId: grant.id, userId: signIn.user.id, clientPk: client.id });
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
