import { createPublicKey, verify } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { AccessDenied, InvalidGrant, InvalidRequest } from '../../lib/errors.js';
import { hashSecret } from '../../lib/secrets.js';
import { findUserById } from '../accounts/accounts.repository.js';
import type { Client } from '../clients/client.js';
import { findClientByClientId } from '../clients/clients.repository.js';
import { revokeGrants } from '../oauth/grants.repository.js';
import { issueTokenSet } from '../oauth/tokens.service.js';
import { presentUserinfo } from '../profiles/profile.presenter.js';
import { consumeChallenge, type Device, revokeDevice } from './mobile.repository.js';
import { MOBILE_SCOPES, type SessionResponse } from './mobile.schemas.js';

/** One answer for every failed sign-in or refresh, so that none tells which part was wrong. */
export const REFUSED =
  'The sign-in was refused: check the username and password, and sign a fresh challenge with the key of this device.';

/**
 * The client of a mobile request: only an enabled client flagged official-mobile may use these
 * routes. Any other client_id, known or not, gets the same 403 and nothing else.
 * @throws InvalidRequest when the body is not an object with a string client_id.
 * @throws AccessDenied for any client that is not the official app.
 */
export async function officialClient(db: Kysely<Database>, body: unknown): Promise<Client> {
  const clientId = (body as { client_id?: unknown } | null | undefined)?.client_id;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequest('The body must be a JSON object.');
  }
  if (typeof clientId !== 'string' || clientId.length === 0 || clientId.length > 128) {
    throw new InvalidRequest('client_id is required.');
  }
  const client = await findClientByClientId(db, clientId);
  if (!client?.officialMobile || client.disabledAt !== null) {
    throw new AccessDenied('This client may not use the mobile sign-in.');
  }
  return client;
}

/** Ed25519 over the UTF-8 bytes of `<challenge>.<device_id>`. */
export function signedByKey(
  publicKey: string,
  signature: string,
  challenge: string,
  deviceId: string,
): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
    return verify(
      null,
      Buffer.from(`${challenge}.${deviceId}`, 'utf8'),
      key,
      Buffer.from(signature, 'base64url'),
    );
  } catch {
    // A key that is not a point of the curve verifies nothing.
    return false;
  }
}

/**
 * Uses up the challenge a verify or refresh presents (whatever happens next), and answers the
 * time it was used at, which the rest of the request goes by.
 * @throws InvalidGrant when it is unknown, used, expired, or another client's or device's.
 */
export async function useChallenge(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  input: { challenge: string; device_id: string },
): Promise<Date> {
  const now = ctx.clock.now();
  const fresh = await consumeChallenge(db, {
    hash: hashSecret(input.challenge),
    clientPk: client.id,
    deviceId: input.device_id,
    now,
  });
  if (!fresh) throw new InvalidGrant(REFUSED);
  return now;
}

/**
 * Signs a device out, in the caller's transaction: its registration (and so its key) ends and its
 * grant is revoked, which stops every access and refresh token of the device at once.
 */
export async function signOut(trx: Kysely<Database>, device: Device, at: Date): Promise<void> {
  await revokeDevice(trx, device.id, at);
  await revokeGrants(trx, { id: device.grantId }, at);
}

/** Tokens for a device's grant, with the profile the app shows. */
export async function sessionResponse(
  trx: Kysely<Database>,
  ctx: Context,
  session: { grantId: number; userId: number; clientPk: number },
): Promise<SessionResponse> {
  const tokens = await issueTokenSet(trx, ctx, {
    ...session,
    scopes: MOBILE_SCOPES,
    withRefreshToken: true,
  });
  const user = await findUserById(trx, session.userId);
  if (!user) throw new Error(`user ${session.userId} of a live session is missing`);
  return {
    ok: true,
    access_token: tokens.accessToken,
    refresh_token: tokens.refreshToken as string,
    token_type: 'Bearer',
    expires_in: tokens.expiresIn,
    scope: MOBILE_SCOPES.join(' '),
    user: presentUserinfo(user, MOBILE_SCOPES, ctx.config.PUBLIC_URL),
  };
}
