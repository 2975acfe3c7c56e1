import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** A pushed authorization request as stored: the checked authorize parameters (RFC 9126 §2.1). */
export interface PushedRequest {
  clientPk: number;
  parameters: Record<string, string>;
}

/** Stores a pushed request under the SHA-256 of its request_uri's random part. */
export async function insertPushedRequest(
  db: Kysely<Database>,
  request: PushedRequest & { requestUriHash: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('pushed_authorization_requests')
    .values({
      request_uri_hash: request.requestUriHash,
      client_pk: request.clientPk,
      parameters: JSON.stringify(request.parameters),
      created_at: request.at,
      expires_at: request.expiresAt,
    })
    .execute();
}

/**
 * Takes the pushed request of this client, atomically and once (RFC 9126 §4: single use): of two
 * authorize hits with one request_uri, one gets it. Undefined when it is unknown, expired, already
 * taken or another client's; another client's attempt leaves it in place.
 */
export async function takePushedRequest(
  db: Kysely<Database>,
  requestUriHash: string,
  clientPk: number,
  now: Date,
): Promise<PushedRequest | undefined> {
  const row = await db
    .deleteFrom('pushed_authorization_requests')
    .where('request_uri_hash', '=', requestUriHash)
    .where('client_pk', '=', clientPk)
    .where('expires_at', '>', now)
    .returning(['client_pk', 'parameters'])
    .executeTakeFirst();
  return row && { clientPk: row.client_pk, parameters: row.parameters };
}
