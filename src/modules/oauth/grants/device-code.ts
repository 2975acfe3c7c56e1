import { inTransaction } from '../../../db/transaction.js';
import {
  type ApiError,
  AuthorizationPending,
  DeviceAccessDenied,
  ExpiredToken,
  InvalidGrant,
  SlowDown,
  UnauthorizedClient,
} from '../../../lib/errors.js';
import { hashSecret } from '../../../lib/secrets.js';
import { findUserById } from '../../accounts/accounts.repository.js';
import { pollDeviceCode, redeemDeviceCode } from '../../device/device-codes.repository.js';
import { signIdToken } from '../../oidc/id-token.js';
import { currentSigner } from '../../oidc/keys.service.js';
import { insertGrant } from '../grants.repository.js';
import { issueTokenSet, tokenResponse } from '../tokens.service.js';
import type { Grant } from './grant.js';

/** RFC 8628 §3.4: the grant type a device polls the token endpoint with. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

function slowDown(intervalSeconds: number): ApiError {
  return new SlowDown(`Polling too fast: poll at most every ${intervalSeconds} seconds from now on.`);
}

/**
 * RFC 8628 §3.4–3.5: a device polling with its device code. Until the person decides it is told
 * `authorization_pending`, or `slow_down` (the interval grown by 5 seconds) when it came back sooner
 * than the interval: from memory when this instance made the request or has seen it pending, by one
 * statement otherwise. Then `access_denied`, or the tokens once, as the code flow issues them (refresh token
 * with offline_access, id_token with openid, DPoP-bound with a proof).
 */
export const deviceCode: Grant = {
  grantType: DEVICE_CODE_GRANT_TYPE,
  parameters: { required: ['device_code'], optional: [] },
  async handle(db, ctx, client, params, jkt) {
    if (!client.deviceGrant)
      throw new UnauthorizedClient(
        'This client is not registered for the device authorization grant (RFC 8628).',
      );
    const now = ctx.clock.now();
    const deviceCodeHash = hashSecret(params.device_code as string);
    const cache = ctx.devicePollCache;
    const remembered = cache?.poll(deviceCodeHash, client.id, now.getTime());
    if (remembered?.slowDown) throw slowDown(remembered.intervalSeconds);
    if (remembered) throw new AuthorizationPending();
    const readVersion = cache?.readVersion ?? 0;
    const polled = await pollDeviceCode(db, { deviceCodeHash, clientPk: client.id, now });
    if (!polled) throw new InvalidGrant('The device_code is invalid.');
    if (polled.redeemedAt !== null) throw new InvalidGrant('The device_code was already used.');
    if (polled.expiresAt.getTime() <= now.getTime()) throw new ExpiredToken();
    if (polled.status === 'denied') throw new DeviceAccessDenied();
    if (polled.status === 'pending') {
      const tooSoon =
        polled.previousPollAt !== null &&
        now.getTime() - polled.previousPollAt.getTime() < polled.previousInterval * 1000;
      cache?.set(
        deviceCodeHash,
        {
          id: polled.id,
          clientPk: client.id,
          expiresAt: polled.expiresAt.getTime(),
          intervalSeconds: polled.intervalSeconds,
          lastPollAt: now.getTime(),
        },
        readVersion,
      );
      if (tooSoon) throw slowDown(polled.intervalSeconds);
      throw new AuthorizationPending();
    }
    const signer = await currentSigner(db, ctx, client.idTokenAlg);
    return inTransaction(db, async (trx) => {
      const redeemed = await redeemDeviceCode(trx, { id: polled.id, now });
      // Allowed, but the access was revoked since, or its user or client disabled.
      if (!redeemed)
        throw new DeviceAccessDenied('The access was revoked, or its user or client is disabled.');
      const user = await findUserById(trx, redeemed.userId);
      if (!user) throw new DeviceAccessDenied();
      const grant = await insertGrant(trx, {
        userId: redeemed.userId,
        clientPk: client.id,
        scopes: redeemed.scopes,
        codeHash: null,
        authTime: redeemed.authTime,
        at: now,
      });
      // RFC 9449 §5: as for a code, a public client's refresh token only when bound to its DPoP key.
      const withRefresh = redeemed.scopes.includes('offline_access') && (!client.isPublic || jkt !== null);
      const tokens = await issueTokenSet(trx, ctx, {
        grantId: grant.id,
        userId: redeemed.userId,
        clientPk: client.id,
        scopes: redeemed.scopes,
        withRefreshToken: withRefresh,
        jkt,
        refreshJkt: client.isPublic ? jkt : null,
      });
      const idToken = redeemed.scopes.includes('openid')
        ? await signIdToken(
            trx,
            ctx,
            {
              user,
              clientId: client.clientId,
              scopes: redeemed.scopes,
              nonce: null,
              authTime: redeemed.authTime,
              amr: redeemed.amr,
              sid: redeemed.sid,
              accessToken: tokens.accessToken,
              alg: client.idTokenAlg,
            },
            signer,
          )
        : undefined;
      const scopes = withRefresh
        ? redeemed.scopes
        : redeemed.scopes.filter((each) => each !== 'offline_access');
      return tokenResponse(tokens, scopes, idToken, jkt);
    });
  },
};
