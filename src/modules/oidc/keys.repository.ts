import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SigningAlgorithm } from '../../lib/signing-algorithms.js';

/** A stored signing key. */
export interface SigningKey {
  kid: string;
  algorithm: SigningAlgorithm;
  privateKeyPem: string;
  /** The public JWK as stored (jsonb: an object on both drivers). */
  publicJwk: Record<string, unknown>;
  createdAt: Date;
  retiredAt: Date | null;
}

const KEY_COLUMNS = [
  'kid',
  'algorithm',
  'private_key_pem as privateKeyPem',
  'public_jwk as publicJwk',
  'created_at as createdAt',
  'retired_at as retiredAt',
] as const;

/** The public parts of the keys that are not retired, of every algorithm, newest first: what the JWKS publishes. */
export function listPublishedKeys(
  db: Kysely<Database>,
): Promise<Pick<SigningKey, 'kid' | 'algorithm' | 'publicJwk'>[]> {
  return db
    .selectFrom('signing_keys')
    .select(['kid', 'algorithm', 'public_jwk as publicJwk'])
    .where('retired_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .execute();
}

/**
 * The key that signs with `algorithm`: its newest that is not retired. `kid` breaks a tie of
 * `created_at`, so every instance picks the same key.
 */
export function findSigningKey(
  db: Kysely<Database>,
  algorithm: SigningAlgorithm,
): Promise<SigningKey | undefined> {
  return db
    .selectFrom('signing_keys')
    .select(KEY_COLUMNS)
    .where('retired_at', 'is', null)
    .where('algorithm', '=', algorithm)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Every key, retired ones included, newest first (for the operator). */
export function listAllKeys(db: Kysely<Database>): Promise<SigningKey[]> {
  return db
    .selectFrom('signing_keys')
    .select(KEY_COLUMNS)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .execute();
}

export function findKey(db: Kysely<Database>, kid: string): Promise<SigningKey | undefined> {
  return db.selectFrom('signing_keys').select(KEY_COLUMNS).where('kid', '=', kid).executeTakeFirst();
}

/**
 * Serializes the writers of signing_keys (ensure, rotate, retire) across instances until the
 * transaction ends. SHARE ROW EXCLUSIVE conflicts with itself and with writes, but not with the
 * plain reads of JWKS and signing, which never wait for it.
 */
export async function lockSigningKeys(trx: Transaction<Database>): Promise<void> {
  await sql`lock table signing_keys in share row exclusive mode`.execute(trx);
}

export function insertSigningKey(
  db: Kysely<Database>,
  key: {
    kid: string;
    algorithm: SigningAlgorithm;
    privateKeyPem: string;
    publicJwk: string;
    createdAt: Date;
  },
): Promise<SigningKey> {
  return db
    .insertInto('signing_keys')
    .values({
      kid: key.kid,
      algorithm: key.algorithm,
      private_key_pem: key.privateKeyPem,
      public_jwk: key.publicJwk,
      created_at: key.createdAt,
    })
    .returning(KEY_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function retireKey(db: Kysely<Database>, kid: string, at: Date): Promise<SigningKey | undefined> {
  return db
    .updateTable('signing_keys')
    .set({ retired_at: at })
    .where('kid', '=', kid)
    .where('retired_at', 'is', null)
    .returning(KEY_COLUMNS)
    .executeTakeFirst();
}
