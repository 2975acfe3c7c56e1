import { type Kysely, sql } from 'kysely';
import { prepared } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';
import type { NewTokenRows } from './grants.repository.js';

/**
 * RFC 6749 §6 with rotation, in one atomic statement: uses the refresh token up and issues the new
 * pair under its grant, if every rule holds (`scopes`: a narrower set, or null for the grant's).
 * Undefined when one refused (nothing written; `findRefreshToken` tells which). A concurrent
 * second use waits on the row lock, then finds it rotated. Reads users and mobile_devices.
 *
 * `jkt`: the thumbprint of the request's DPoP key, or null. A refresh token bound to a key (a
 * public client's) is used only with a proof of that key, and its successor stays bound to it
 * (RFC 9449 §5); the new access token is bound to the request's key.
 */
export async function rotateRefreshToken(
  db: Kysely<Database>,
  input: {
    tokenHash: string;
    clientPk: number;
    scopes: string[] | null;
    jkt: string | null;
    now: Date;
    tokens: NewTokenRows;
  },
): Promise<{ grantId: number; userId: number; scopes: string[] } | undefined> {
  const result = await sql<{ grantId: number; userId: number; scopes: string[] }>`${prepared}
    with rotated as (
      update refresh_tokens r set rotated_at = ${input.now}
      from grants g join users u on u.id = g.user_id
      where g.id = r.grant_id
        and r.token_hash = ${input.tokenHash}
        and r.rotated_at is null and r.revoked_at is null and r.expires_at > ${input.now}
        and (r.jkt is null or r.jkt = ${input.jkt}::text)
        and g.client_pk = ${input.clientPk} and g.revoked_at is null
        and u.disabled_at is null
        and (${input.scopes}::text[] is null or ${input.scopes}::text[] <@ g.scopes)
        -- A device of the mobile app refreshes only with its signature (/api/v1/mobile/refresh).
        and not exists (select 1 from mobile_devices d where d.grant_id = g.id)
      returning r.grant_id, r.jkt, g.user_id, coalesce(${input.scopes}::text[], g.scopes) as scopes
    ), access as (
      insert into access_tokens (token_hash, grant_id, user_id, client_pk, scopes, created_at, expires_at, jkt)
      select ${input.tokens.accessTokenHash}, grant_id, user_id, ${input.clientPk}, scopes, ${input.now},
        ${input.tokens.accessExpiresAt}, ${input.jkt}::text
      from rotated
    ), refresh as (
      insert into refresh_tokens (token_hash, grant_id, created_at, expires_at, jkt)
      select ${input.tokens.refreshTokenHash}, grant_id, ${input.now}, ${input.tokens.refreshExpiresAt}, jkt
      from rotated
    )
    select grant_id as "grantId", user_id as "userId", scopes from rotated`.execute(db);
  return result.rows[0];
}
