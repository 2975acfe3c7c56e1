import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';

/** A client registered through RFC 7591, not deleted: what authenticates its RFC 7592 management. */
export interface StoredRegistration {
  clientPk: number;
  /** SHA-256 of its registration access token. */
  accessTokenHash: string;
}

/** The registration of `clientId`; undefined for an unknown or deleted client, or one registered otherwise. */
export async function findRegistration(
  db: Kysely<Database>,
  clientId: string,
): Promise<StoredRegistration | undefined> {
  const row = await db
    .selectFrom('clients')
    .select(['id', 'registration_access_token_hash'])
    .where('client_id', '=', clientId)
    .where('deleted_at', 'is', null)
    .where('registration_access_token_hash', 'is not', null)
    .executeTakeFirst();
  if (!row?.registration_access_token_hash) return undefined;
  return { clientPk: row.id, accessTokenHash: row.registration_access_token_hash };
}
