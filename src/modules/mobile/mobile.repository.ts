import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** A device of the official app signed in (or once signed in) to an account with its key. */
export interface Device {
  id: number;
  clientPk: number;
  /** The app's own id of the device. */
  deviceId: string;
  userId: number;
  /** The raw 32-byte Ed25519 public key, base64url without padding. */
  publicKey: string;
  /** The grant the device's tokens were issued under. */
  grantId: number;
  label: string;
  createdAt: Date;
  lastUsedAt: Date;
  revokedAt: Date | null;
}

/** The `mobile_devices` columns, as the fields of a `Device`. */
const DEVICE = [
  'id',
  'client_pk as clientPk',
  'device_id as deviceId',
  'user_id as userId',
  'public_key as publicKey',
  'grant_id as grantId',
  'label',
  'created_at as createdAt',
  'last_used_at as lastUsedAt',
  'revoked_at as revokedAt',
] as const;

export async function insertChallenge(
  db: Kysely<Database>,
  challenge: { hash: string; clientPk: number; deviceId: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('mobile_challenges')
    .values({
      challenge_hash: challenge.hash,
      client_pk: challenge.clientPk,
      device_id: challenge.deviceId,
      created_at: challenge.at,
      expires_at: challenge.expiresAt,
    })
    .execute();
}

/**
 * Uses up a challenge in one statement: it is deleted only when it was issued to this client and
 * device, so two requests presenting it cannot both succeed. False when there was no such
 * challenge or it had expired (an expired one is deleted all the same).
 */
export async function consumeChallenge(
  db: Kysely<Database>,
  challenge: { hash: string; clientPk: number; deviceId: string; now: Date },
): Promise<boolean> {
  const row = await db
    .deleteFrom('mobile_challenges')
    .where('challenge_hash', '=', challenge.hash)
    .where('client_pk', '=', challenge.clientPk)
    .where('device_id', '=', challenge.deviceId)
    .returning('expires_at')
    .executeTakeFirst();
  return row !== undefined && row.expires_at.getTime() > challenge.now.getTime();
}

/** The device's live registration (not signed out), locked for the caller's transaction. */
export function lockLiveDevice(
  db: Kysely<Database>,
  device: { clientPk: number; deviceId: string },
): Promise<Device | undefined> {
  return db
    .selectFrom('mobile_devices')
    .select(DEVICE)
    .where('client_pk', '=', device.clientPk)
    .where('device_id', '=', device.deviceId)
    .where('revoked_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** Whether this device signed in to this user with this key before (whether or not it is signed in now). */
export async function hasSignedInBefore(
  db: Kysely<Database>,
  device: { clientPk: number; deviceId: string; userId: number; publicKey: string },
): Promise<boolean> {
  const row = await db
    .selectFrom('mobile_devices')
    .select('id')
    .where('client_pk', '=', device.clientPk)
    .where('device_id', '=', device.deviceId)
    .where('user_id', '=', device.userId)
    .where('public_key', '=', device.publicKey)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertDevice(
  db: Kysely<Database>,
  device: Pick<Device, 'clientPk' | 'deviceId' | 'userId' | 'publicKey' | 'grantId' | 'label'> & { at: Date },
): Promise<void> {
  await db
    .insertInto('mobile_devices')
    .values({
      client_pk: device.clientPk,
      device_id: device.deviceId,
      user_id: device.userId,
      public_key: device.publicKey,
      grant_id: device.grantId,
      label: device.label,
      created_at: device.at,
      last_used_at: device.at,
    })
    .execute();
}

/** Ends a device's registration, and so its key (its grant is the grant owner's to revoke). */
export async function revokeDevice(db: Kysely<Database>, id: number, at: Date): Promise<void> {
  await db.updateTable('mobile_devices').set({ revoked_at: at }).where('id', '=', id).execute();
}

export async function touchDevice(db: Kysely<Database>, deviceId: number, at: Date): Promise<void> {
  await db.updateTable('mobile_devices').set({ last_used_at: at }).where('id', '=', deviceId).execute();
}

/** The user's signed-in devices, most recently used first. */
export function listLiveDevices(db: Kysely<Database>, userId: number): Promise<Device[]> {
  return db
    .selectFrom('mobile_devices')
    .select(DEVICE)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('last_used_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** A user's live device by its row id, locked (the account page's "sign out" button). */
export function lockLiveDeviceOfUser(
  db: Kysely<Database>,
  userId: number,
  id: number,
): Promise<Device | undefined> {
  return db
    .selectFrom('mobile_devices')
    .select(DEVICE)
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** Signs out the app's devices of a user, a client, or both (their keys stop working too). */
export async function signOutDevicesOf(
  db: Kysely<Database>,
  where: { userId?: number; clientPk?: number },
  at: Date,
): Promise<void> {
  let query = db.updateTable('mobile_devices').set({ revoked_at: at }).where('revoked_at', 'is', null);
  if (where.userId !== undefined) query = query.where('user_id', '=', where.userId);
  if (where.clientPk !== undefined) query = query.where('client_pk', '=', where.clientPk);
  await query.execute();
}
