import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** The password step of a sign-in, waiting for its second factor. */
export interface PendingSignIn {
  idHash: string;
  userId: number;
  expiresAt: Date;
  firstFactor: 'pwd' | 'fed';
}

/** Stores a pending sign-in (only the SHA-256 of the browser's cookie value). */
export async function insertPendingSignIn(
  db: Kysely<Database>,
  input: { idHash: string; userId: number; firstFactor: 'pwd' | 'fed'; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('pending_sign_ins')
    .values({
      id_hash: input.idHash,
      user_id: input.userId,
      first_factor: input.firstFactor,
      created_at: input.at,
      expires_at: input.expiresAt,
    })
    .execute();
}

/** The pending sign-in with this hash, while unexpired and not consumed. */
export async function findLivePendingSignIn(
  db: Kysely<Database>,
  idHash: string,
  now: Date,
): Promise<PendingSignIn | undefined> {
  const row = await db
    .selectFrom('pending_sign_ins')
    .select(['id_hash', 'user_id', 'expires_at', 'first_factor'])
    .where('id_hash', '=', idHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row
    ? { idHash: row.id_hash, userId: row.user_id, expiresAt: row.expires_at, firstFactor: row.first_factor }
    : undefined;
}

/** Consumes a live pending sign-in: true for exactly one caller (a conditional UPDATE). */
export async function consumePendingSignIn(
  db: Kysely<Database>,
  idHash: string,
  now: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('pending_sign_ins')
    .set({ consumed_at: now })
    .where('id_hash', '=', idHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Removes every pending sign-in of the user (a reset of their factors, account deletion). */
export async function deletePendingSignInsOfUser(db: Kysely<Database>, userId: number): Promise<void> {
  await db.deleteFrom('pending_sign_ins').where('user_id', '=', userId).execute();
}

/** The password step of a mobile sign-in, bound to the app's client, the device id and its key. */
export interface MobilePendingSignIn {
  id: number;
  userId: number;
  clientPk: number;
  deviceId: string;
  publicKey: string;
}

/** Stores a mobile pending sign-in (only the SHA-256 of its `mfa_…` token). */
export async function insertMobilePendingSignIn(
  db: Kysely<Database>,
  input: Omit<MobilePendingSignIn, 'id'> & { tokenHash: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('mobile_pending_sign_ins')
    .values({
      token_hash: input.tokenHash,
      user_id: input.userId,
      client_pk: input.clientPk,
      device_id: input.deviceId,
      public_key: input.publicKey,
      created_at: input.at,
      expires_at: input.expiresAt,
    })
    .execute();
}

/** The live (unexpired, unconsumed) mobile pending sign-in with this hash, of this client and device only. */
export async function findLiveMobilePendingSignIn(
  db: Kysely<Database>,
  input: { tokenHash: string; clientPk: number; deviceId: string; now: Date },
): Promise<MobilePendingSignIn | undefined> {
  const row = await db
    .selectFrom('mobile_pending_sign_ins')
    .select(['id', 'user_id', 'client_pk', 'device_id', 'public_key'])
    .where('token_hash', '=', input.tokenHash)
    .where('client_pk', '=', input.clientPk)
    .where('device_id', '=', input.deviceId)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', input.now)
    .executeTakeFirst();
  return row
    ? {
        id: row.id,
        userId: row.user_id,
        clientPk: row.client_pk,
        deviceId: row.device_id,
        publicKey: row.public_key,
      }
    : undefined;
}

/** Consumes a live mobile pending sign-in: true for exactly one caller (a conditional UPDATE). */
export async function consumeMobilePendingSignIn(
  db: Kysely<Database>,
  id: number,
  now: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('mobile_pending_sign_ins')
    .set({ consumed_at: now })
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Removes every mobile pending sign-in of the user (a reset of their factors or password, account deletion). */
export async function deleteMobilePendingSignInsOfUser(db: Kysely<Database>, userId: number): Promise<void> {
  await db.deleteFrom('mobile_pending_sign_ins').where('user_id', '=', userId).execute();
}
