import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidGrant } from '../../lib/errors.js';
import { hashSecret } from '../../lib/secrets.js';
import { findUserById } from '../accounts/accounts.repository.js';
import type { Client } from '../clients/client.js';
import {
  findRefreshToken,
  markRefreshTokenRotated,
  revokeAccessTokensOfGrant,
} from '../oauth/grants.repository.js';
import { lockLiveDevice, touchDevice } from './mobile.repository.js';
import type { RefreshBody, SessionResponse } from './mobile.schemas.js';
import { REFUSED, sessionResponse, signedByKey, signOut, useChallenge } from './mobile.service.js';

/**
 * POST /api/v1/mobile/refresh: a fresh challenge signed by the device's registered key, and the
 * device's refresh token, which rotates. The previous access token stops working. A refresh token
 * presented a second time means it leaked: the device's session ends.
 * @throws InvalidGrant for a bad challenge or signature, a device not signed in, or a refresh token
 * that is not this device's live one.
 */
export async function refreshDevice(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  input: RefreshBody,
): Promise<SessionResponse> {
  const now = await useChallenge(db, ctx, client, input);
  const tokenHash = hashSecret(input.refresh_token);

  const outcome = await db.transaction().execute(async (trx) => {
    const device = await lockLiveDevice(trx, { clientPk: client.id, deviceId: input.device_id });
    if (!device || !signedByKey(device.publicKey, input.signature, input.challenge, input.device_id)) {
      return { refused: true } as const;
    }
    const rotated = await markRefreshTokenRotated(trx, tokenHash, now);
    if (!rotated) {
      const known = await findRefreshToken(trx, tokenHash);
      if (known?.rotatedAt && known.grantId === device.grantId) {
        // RFC 9700 §4.14.2: a rotated refresh token presented again has leaked.
        await signOut(trx, device, now);
      }
      return { refused: true } as const;
    }
    if (
      rotated.grantId !== device.grantId ||
      rotated.grantRevokedAt !== null ||
      rotated.expiresAt.getTime() <= now.getTime()
    ) {
      throw new InvalidGrant(REFUSED);
    }
    await revokeAccessTokensOfGrant(trx, device.grantId, now);
    await touchDevice(trx, device.id, now);
    const user = await findUserById(trx, device.userId);
    if (!user || user.disabledAt !== null) throw new InvalidGrant(REFUSED);
    return {
      refused: false,
      session: await sessionResponse(trx, ctx, {
        grantId: device.grantId,
        userId: device.userId,
        clientPk: client.id,
      }),
    } as const;
  });
  if (outcome.refused) throw new InvalidGrant(REFUSED);
  return outcome.session;
}
