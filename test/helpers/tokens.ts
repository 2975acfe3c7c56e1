import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { type Clock, systemClock } from '../../src/lib/clock.js';
import { generateSecret, hashSecret } from '../../src/lib/secrets.js';

export interface InsertAccessTokenOptions {
  userId: number;
  /** The client's public `client_id` (`pk_…`), as `createClient` returns it. */
  clientId: string;
  scopes: readonly string[];
  /** Default: 90 days after `clock.now()`. */
  expiresAt?: Date;
  /** Insert the token already revoked. */
  revoked?: boolean;
  /** Insert its grant already revoked. */
  grantRevoked?: boolean;
  /** The time the grant and token were created at; default the system clock. */
  clock?: Clock;
  /** The raw token; default a fresh `at_…` value. */
  token?: string;
}

/**
 * A grant and an access token for it, inserted directly (as the token endpoint would store them:
 * only the SHA-256 hash of the token). Returns the raw token to send as `Authorization: Bearer`.
 */
export async function insertAccessToken(
  db: Kysely<Database>,
  options: InsertAccessTokenOptions,
): Promise<string> {
  const now = (options.clock ?? systemClock).now();
  const token = options.token ?? generateSecret('accessToken');
  const client = await db
    .selectFrom('clients')
    .select('id')
    .where('client_id', '=', options.clientId)
    .executeTakeFirstOrThrow();
  const grant = await db
    .insertInto('grants')
    .values({
      user_id: options.userId,
      client_pk: client.id,
      scopes: [...options.scopes],
      auth_time: now,
      created_at: now,
      revoked_at: options.grantRevoked ? now : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('access_tokens')
    .values({
      token_hash: hashSecret(token),
      grant_id: grant.id,
      user_id: options.userId,
      client_pk: client.id,
      scopes: [...options.scopes],
      created_at: now,
      expires_at: options.expiresAt ?? new Date(now.getTime() + 90 * 24 * 3600 * 1000),
      revoked_at: options.revoked ? now : null,
    })
    .execute();
  return token;
}
