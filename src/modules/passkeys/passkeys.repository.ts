import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { PasskeysTable } from '../../db/schema-passkeys.js';

/** A registered passkey as the layers above see it: its public key and state (nothing secret). */
export interface Passkey {
  id: number;
  userId: number;
  credentialId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  aaguid: string;
  backupEligible: boolean;
  backedUp: boolean;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export type NewPasskey = Omit<Passkey, 'id' | 'lastUsedAt'>;

/** What a ceremony under way remembers: hashes only. */
export interface StoredChallenge {
  challengeHash: string;
  purpose: 'register' | 'authenticate';
  userId: number | null;
  expiresAt: Date;
}

function toPasskey(row: Selectable<PasskeysTable>): Passkey {
  return {
    id: row.id,
    userId: row.user_id,
    credentialId: row.credential_id,
    publicKey: row.public_key,
    counter: Number(row.counter),
    transports: row.transports,
    aaguid: row.aaguid,
    backupEligible: row.backup_eligible,
    backedUp: row.backed_up,
    name: row.name,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** The passkeys of a user, oldest first. */
export async function listPasskeys(db: Kysely<Database>, userId: number): Promise<Passkey[]> {
  const rows = await db
    .selectFrom('passkeys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
  return rows.map(toPasskey);
}

/** Whether the user has at least one passkey (a second factor). */
export async function hasPasskey(db: Kysely<Database>, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('passkeys')
    .select('id')
    .where('user_id', '=', userId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The passkey of a credential id, locked until the transaction ends (its counter is about to move). */
export async function lockPasskeyByCredentialId(
  trx: Transaction<Database>,
  credentialId: string,
): Promise<Passkey | undefined> {
  const row = await trx
    .selectFrom('passkeys')
    .selectAll()
    .where('credential_id', '=', credentialId)
    .forUpdate()
    .executeTakeFirst();
  return row ? toPasskey(row) : undefined;
}

/** Whether a credential id is registered to anyone. */
export async function credentialExists(db: Kysely<Database>, credentialId: string): Promise<boolean> {
  const row = await db
    .selectFrom('passkeys')
    .select('id')
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Stores a new passkey; undefined when its credential id is already registered (unique). */
export async function insertPasskey(db: Kysely<Database>, passkey: NewPasskey): Promise<Passkey | undefined> {
  const row = await db
    .insertInto('passkeys')
    .values({
      user_id: passkey.userId,
      credential_id: passkey.credentialId,
      public_key: passkey.publicKey,
      counter: passkey.counter,
      transports: passkey.transports,
      aaguid: passkey.aaguid,
      backup_eligible: passkey.backupEligible,
      backed_up: passkey.backedUp,
      name: passkey.name,
      created_at: passkey.createdAt,
    })
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toPasskey(row) : undefined;
}

/** After a verified assertion: the new counter, the backup state, when it was used. */
export async function recordPasskeyUse(
  db: Kysely<Database>,
  passkeyId: number,
  use: { counter: number; backedUp: boolean; at: Date },
): Promise<void> {
  await db
    .updateTable('passkeys')
    .set({ counter: use.counter, backed_up: use.backedUp, last_used_at: use.at })
    .where('id', '=', passkeyId)
    .execute();
}

/** Renames a passkey of the user; undefined when the user has no such passkey. */
export async function renamePasskey(
  db: Kysely<Database>,
  input: { userId: number; passkeyId: number; name: string },
): Promise<Passkey | undefined> {
  const row = await db
    .updateTable('passkeys')
    .set({ name: input.name })
    .where('id', '=', input.passkeyId)
    .where('user_id', '=', input.userId)
    .returningAll()
    .executeTakeFirst();
  return row ? toPasskey(row) : undefined;
}

/** Deletes a passkey of the user; the deleted one, or undefined when the user has no such passkey. */
export async function deletePasskey(
  db: Kysely<Database>,
  input: { userId: number; passkeyId: number },
): Promise<Passkey | undefined> {
  const row = await db
    .deleteFrom('passkeys')
    .where('id', '=', input.passkeyId)
    .where('user_id', '=', input.userId)
    .returningAll()
    .executeTakeFirst();
  return row ? toPasskey(row) : undefined;
}

/**
 * Deletes every passkey of a user (account deletion, `idp users mfa-reset`) and the ceremonies
 * under way for the account; returns how many passkeys there were.
 */
export async function deletePasskeysOfUser(trx: Kysely<Database>, userId: number): Promise<number> {
  await trx.deleteFrom('webauthn_challenges').where('user_id', '=', userId).execute();
  const rows = await trx.deleteFrom('passkeys').where('user_id', '=', userId).returning('id').execute();
  return rows.length;
}

export async function insertChallenge(
  db: Kysely<Database>,
  challenge: StoredChallenge & { ceremonyHash: string; createdAt: Date },
): Promise<void> {
  await db
    .insertInto('webauthn_challenges')
    .values({
      ceremony_hash: challenge.ceremonyHash,
      challenge_hash: challenge.challengeHash,
      purpose: challenge.purpose,
      user_id: challenge.userId,
      created_at: challenge.createdAt,
      expires_at: challenge.expiresAt,
    })
    .execute();
}

/**
 * Takes the ceremony of `ceremonyHash` for `purpose`, atomically (DELETE … RETURNING): of two
 * requests presenting it, only one gets it, expired or not; undefined when there is none, or when
 * it has expired.
 */
export async function consumeChallenge(
  db: Kysely<Database>,
  input: { ceremonyHash: string; purpose: StoredChallenge['purpose']; now: Date },
): Promise<StoredChallenge | undefined> {
  const row = await db
    .deleteFrom('webauthn_challenges')
    .where('ceremony_hash', '=', input.ceremonyHash)
    .where('purpose', '=', input.purpose)
    .returning(['challenge_hash', 'purpose', 'user_id', 'expires_at'])
    .executeTakeFirst();
  if (!row || row.expires_at.getTime() <= input.now.getTime()) return undefined;
  return {
    challengeHash: row.challenge_hash,
    purpose: row.purpose,
    userId: row.user_id,
    expiresAt: row.expires_at,
  };
}
