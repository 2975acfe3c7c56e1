import { type Insertable, type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Database, SigningKeysTable } from '../../db/schema.js';

export type SigningKeyRow = Selectable<SigningKeysTable>;

/** The one algorithm we sign id_tokens with (CONTRACT.md §5). */
export const SIGNING_ALGORITHM = 'RS256';

/** The public parts of the keys that are not retired, newest first: what the JWKS publishes. */
export function listPublishedKeys(
  db: Kysely<Database>,
): Promise<Pick<SigningKeyRow, 'kid' | 'public_jwk'>[]> {
  return db
    .selectFrom('signing_keys')
    .select(['kid', 'public_jwk'])
    .where('retired_at', 'is', null)
    .where('algorithm', '=', SIGNING_ALGORITHM)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .execute();
}

/**
 * The key that signs: the newest that is not retired. `kid` breaks a tie of `created_at`, so
 * every instance picks the same key.
 */
export function findSigningKey(db: Kysely<Database>): Promise<SigningKeyRow | undefined> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where('retired_at', 'is', null)
    .where('algorithm', '=', SIGNING_ALGORITHM)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Every key, retired ones included, newest first (for the operator). */
export function listAllKeys(db: Kysely<Database>): Promise<SigningKeyRow[]> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .execute();
}

export function findKey(db: Kysely<Database>, kid: string): Promise<SigningKeyRow | undefined> {
  return db.selectFrom('signing_keys').selectAll().where('kid', '=', kid).executeTakeFirst();
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
  key: Insertable<SigningKeysTable>,
): Promise<SigningKeyRow> {
  return db.insertInto('signing_keys').values(key).returningAll().executeTakeFirstOrThrow();
}

export function retireKey(db: Kysely<Database>, kid: string, at: Date): Promise<SigningKeyRow | undefined> {
  return db
    .updateTable('signing_keys')
    .set({ retired_at: at })
    .where('kid', '=', kid)
    .where('retired_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}
