import { createPublicKey, randomBytes, verify } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { AccessDenied, InvalidGrant, InvalidRequest } from '../../lib/errors.js';
import { hashSecret } from '../../lib/secrets.js';
import { isUniqueViolation } from '../../lib/validation.js';
import { findUserById } from '../accounts/accounts.repository.js';
import { authenticate } from '../accounts/accounts.service.js';
import type { Client } from '../clients/client.js';
import { findClientByClientId } from '../clients/clients.repository.js';
import { findRefreshToken, insertGrant, markRefreshTokenRotated } from '../oauth/grants.repository.js';
import { issueTokenSet } from '../oauth/tokens.service.js';
import { presentUserinfo } from '../profiles/profile.presenter.js';
import {
  consumeChallenge,
  hasSignedInBefore,
  insertChallenge,
  insertDevice,
  listLiveDevices,
  lockLiveDevice,
  lockLiveDeviceOfUser,
  revokeAccessTokensOfGrant,
  revokeDevice,
  touchDevice,
} from './mobile.repository.js';
import {
  CHALLENGE_TTL_SECONDS,
  type ChallengeBody,
  type LogoutBody,
  MOBILE_SCOPES,
  type RefreshBody,
  type SessionResponse,
  type VerifyBody,
} from './mobile.schemas.js';

/** 400 `invalid_request`: verify with a device_id that another account is signed in on. */
class DeviceOfAnotherAccount extends InvalidRequest {
  constructor() {
    super(
      'This device_id is signed in to another account: sign that account out on the device (mobile logout) first.',
    );
  }
}

/** One answer for every failed sign-in or refresh, so that none tells which part was wrong. */
const REFUSED =
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

/** Ed25519 over the UTF-8 bytes of `<challenge>.<device_id>` (CONTRACT.md §6). */
function signedByKey(publicKey: string, signature: string, challenge: string, deviceId: string): boolean {
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
 * Uses up the challenge a verify or refresh presents (whatever happens next).
 * @throws InvalidGrant when it is unknown, used, expired, or another client's or device's.
 */
async function useChallenge(
  db: Kysely<Database>,
  client: Client,
  input: { challenge: string; device_id: string },
  now: Date,
): Promise<void> {
  const fresh = await consumeChallenge(db, {
    hash: hashSecret(input.challenge),
    clientPk: client.id,
    deviceId: input.device_id,
    now,
  });
  if (!fresh) throw new InvalidGrant(REFUSED);
}

/** POST /api/v1/mobile/challenge: a single-use nonce for this device, valid CHALLENGE_TTL_SECONDS. */
export async function issueChallenge(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  input: ChallengeBody,
): Promise<{ ok: true; challenge: string; expires_in: number }> {
  const challenge = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  await insertChallenge(db, {
    hash: hashSecret(challenge),
    clientPk: client.id,
    deviceId: input.device_id,
    at: now,
    expiresAt: new Date(now.getTime() + CHALLENGE_TTL_SECONDS * 1000),
  });
  return { ok: true, challenge, expires_in: CHALLENGE_TTL_SECONDS };
}

async function sessionResponse(
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
  const now = ctx.clock.now();
  await useChallenge(db, client, input, now);
  if (!signedByKey(input.public_key, input.signature, input.challenge, input.device_id)) {
    throw new InvalidGrant(REFUSED);
  }
  // The signature proved this request holds the key sent: a device that signed in to the account
  // with that key before counts its failures in a budget of its own (the app's device cookie).
  const signIn = await authenticate(db, ctx, input.username, input.password, async (userId) =>
    (await hasSignedInBefore(db, {
      clientPk: client.id,
      deviceId: input.device_id,
      userId,
      publicKey: input.public_key,
    }))
      ? `mobile:${hashSecret(`${client.id}.${input.device_id}`)}`
      : undefined,
  );
  if (!signIn.ok) throw new InvalidGrant(REFUSED);

  const start = () =>
    db.transaction().execute(async (trx) => {
      const previous = await lockLiveDevice(trx, { clientPk: client.id, deviceId: input.device_id });
      // A device is bound to the account signed in on it: another account cannot take it over
      // (which would sign its owner out) until it is signed out.
      if (previous && previous.user_id !== signIn.user.id) throw new DeviceOfAnotherAccount();
      if (previous) await revokeDevice(trx, previous, now);
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
  let session: SessionResponse;
  try {
    session = await start();
  } catch (error) {
    // Two sign-ins of one device at once: the second found no registration to replace, then lost
    // the race on the unique index. Once more, it replaces the first.
    if (!isUniqueViolation(error)) throw error;
    session = await start();
  }
  return session;
}

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
  const now = ctx.clock.now();
  await useChallenge(db, client, input, now);
  const tokenHash = hashSecret(input.refresh_token);

  const outcome = await db.transaction().execute(async (trx) => {
    const device = await lockLiveDevice(trx, { clientPk: client.id, deviceId: input.device_id });
    if (!device || !signedByKey(device.public_key, input.signature, input.challenge, input.device_id)) {
      return { refused: true } as const;
    }
    const rotated = await markRefreshTokenRotated(trx, tokenHash, now);
    if (!rotated) {
      const known = await findRefreshToken(trx, tokenHash);
      if (known?.rotatedAt && known.grantId === device.grant_id) {
        // RFC 9700 §4.14.2: a rotated refresh token presented again has leaked.
        await revokeDevice(trx, device, now);
      }
      return { refused: true } as const;
    }
    if (
      rotated.grantId !== device.grant_id ||
      rotated.grantRevokedAt !== null ||
      rotated.expiresAt.getTime() <= now.getTime()
    ) {
      throw new InvalidGrant(REFUSED);
    }
    await revokeAccessTokensOfGrant(trx, device.grant_id, now);
    await touchDevice(trx, device.id, now);
    const user = await findUserById(trx, device.user_id);
    if (!user || user.disabled_at !== null) throw new InvalidGrant(REFUSED);
    return {
      refused: false,
      session: await sessionResponse(trx, ctx, {
        grantId: device.grant_id,
        userId: device.user_id,
        clientPk: client.id,
      }),
    } as const;
  });
  if (outcome.refused) throw new InvalidGrant(REFUSED);
  return outcome.session;
}

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
    if (!device || device.grant_id !== token.grantId || device.user_id !== token.userId) {
      throw new InvalidRequest('device_id is not the device this access token was issued to.');
    }
    await revokeDevice(trx, device, now);
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
    signedInAt: device.created_at,
    lastUsedAt: device.last_used_at,
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
    await revokeDevice(trx, device, input.at);
    return true;
  });
}
