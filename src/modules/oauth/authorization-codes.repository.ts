import { type Kysely, sql } from 'kysely';
import { prepared } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';
import { toUser, USER_COLUMNS, type User } from '../accounts/user.js';
import type { NewTokenRows } from './grants.repository.js';

/** A code as stored, with its user's and consent's state, to say why a redemption failed. */
export interface StoredAuthorizationCode {
  clientPk: number;
  redirectUri: string;
  scopes: string[];
  codeChallenge: string | null;
  createdAt: Date;
  expiresAt: Date;
  consumedAt: Date | null;
  userDisabledAt: Date | null;
  consentCreatedAt: Date | null;
  consentScopes: string[] | null;
}

export interface RedeemedCode {
  grantId: number;
  scopes: string[];
  nonce: string | null;
  authTime: Date;
  amr: string[];
  /** The browser session that approved the code, or null. */
  sid: string | null;
  refreshIssued: boolean;
  user: User;
}

export async function insertAuthorizationCode(
  db: Kysely<Database>,
  code: {
    codeHash: string;
    clientPk: number;
    userId: number;
    redirectUri: string;
    scopes: string[];
    codeChallenge: string | null;
    nonce: string | null;
    authTime: Date;
    amr: string[];
    /** The approving browser session's public id (OIDC Back-Channel Logout 1.0 §2.4), or null. */
    sid: string | null;
    at: Date;
    expiresAt: Date;
  },
): Promise<void> {
  await db
    .insertInto('authorization_codes')
    .values({
      code_hash: code.codeHash,
      client_pk: code.clientPk,
      user_id: code.userId,
      redirect_uri: code.redirectUri,
      scopes: code.scopes,
      code_challenge: code.codeChallenge,
      nonce: code.nonce,
      auth_time: code.authTime,
      amr: code.amr,
      sid: code.sid,
      created_at: code.at,
      expires_at: code.expiresAt,
    })
    .execute();
}

/** Deletes the codes not yet redeemed of a user, a client, browser sessions (`sids`), or several; answers how many. */
export async function deleteUnredeemedCodes(
  db: Kysely<Database>,
  where: { userId?: number; clientPk?: number; sids?: readonly string[] },
): Promise<number> {
  let query = db.deleteFrom('authorization_codes').where('consumed_at', 'is', null);
  if (where.userId !== undefined) query = query.where('user_id', '=', where.userId);
  if (where.clientPk !== undefined) query = query.where('client_pk', '=', where.clientPk);
  if (where.sids !== undefined) query = query.where('sid', 'in', [...where.sids]);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

const USER_SELECT = sql.join(USER_COLUMNS.map((column) => sql.ref(`u.${column}`)));

/**
 * Redeems a code in ONE statement (RFC 6749 §4.1.3, RFC 7636 §4.6; `challenge` is S256 of the
 * verifier, or null) and inserts its grant and tokens in the same statement: one atomic round trip
 * on the hot path is why this writes grants and tokens here. Undefined when any condition fails
 * (nothing is written; `findAuthorizationCode` tells which). `binding`: the DPoP key thumbprints
 * of the access and refresh token (RFC 9449 §5, §6), and whether a refresh token may be issued at
 * all (a public client gets one only when it is bound).
 */
export async function redeemAuthorizationCode(
  db: Kysely<Database>,
  input: {
    codeHash: string;
    clientPk: number;
    redirectUri: string;
    challenge: string | null;
    now: Date;
    tokens: NewTokenRows;
    binding: { accessJkt: string | null; refreshJkt: string | null; refreshAllowed: boolean };
  },
): Promise<RedeemedCode | undefined> {
  const result = await sql<
    Parameters<typeof toUser>[0] & {
      r_grant_id: number;
      r_scopes: string[];
      r_nonce: string | null;
      r_auth_time: Date;
      r_amr: string[];
      r_sid: string | null;
      r_refresh_issued: boolean;
    }
  >`${prepared}
    with code as (
      update authorization_codes c set consumed_at = ${input.now}
      where c.code_hash = ${input.codeHash}
        and c.consumed_at is null
        and c.client_pk = ${input.clientPk}
        and c.redirect_uri = ${input.redirectUri}
        and c.expires_at > ${input.now}
        and c.code_challenge is not distinct from ${input.challenge}::text
        and exists (select 1 from users u where u.id = c.user_id and u.disabled_at is null)
        and exists (select 1 from clients k where k.id = c.client_pk and k.disabled_at is null)
        -- The consent the code was issued under still stands: not revoked (a consent given again
        -- afterwards is newer than the code) and still covering the code's scopes.
        and exists (
          select 1 from consents k
          where k.user_id = c.user_id and k.client_pk = c.client_pk
            and k.created_at <= c.created_at and c.scopes <@ k.scopes
        )
      returning c.*
    ), g as (
      insert into grants (user_id, client_pk, scopes, code_hash, auth_time, created_at, sid)
      select user_id, client_pk, scopes, code_hash, auth_time, ${input.now}, sid from code
      returning id
    ), a as (
      insert into access_tokens (token_hash, grant_id, user_id, client_pk, scopes, created_at, expires_at, jkt)
      select ${input.tokens.accessTokenHash}, g.id, code.user_id, code.client_pk, code.scopes, ${input.now}, ${input.tokens.accessExpiresAt},
        ${input.binding.accessJkt}::text
      from code, g
      returning grant_id
    ), r as (
      insert into refresh_tokens (token_hash, grant_id, created_at, expires_at, jkt)
      select ${input.tokens.refreshTokenHash}, g.id, ${input.now}, ${input.tokens.refreshExpiresAt},
        ${input.binding.refreshJkt}::text
      from code, g
      where 'offline_access' = any(code.scopes) and ${input.binding.refreshAllowed}
      returning grant_id
    )
    select ${USER_SELECT}, g.id as r_grant_id, code.scopes as r_scopes, code.nonce as r_nonce,
      code.auth_time as r_auth_time, code.amr as r_amr, code.sid as r_sid, exists (select 1 from r) as r_refresh_issued
    from code, g, a, users u
    where u.id = code.user_id
  `.execute(db);
  const row = result.rows[0];
  if (!row) return undefined;
  return {
    grantId: row.r_grant_id,
    scopes: row.r_scopes,
    nonce: row.r_nonce,
    authTime: row.r_auth_time,
    amr: row.r_amr,
    sid: row.r_sid,
    refreshIssued: row.r_refresh_issued,
    user: toUser(row),
  };
}

/** A code as stored. One statement, with read-only joins to its user and consent. */
export async function findAuthorizationCode(
  db: Kysely<Database>,
  codeHash: string,
): Promise<StoredAuthorizationCode | undefined> {
  const row = await db
    .selectFrom('authorization_codes')
    .innerJoin('users', 'users.id', 'authorization_codes.user_id')
    .leftJoin('consents', (join) =>
      join
        .onRef('consents.user_id', '=', 'authorization_codes.user_id')
        .onRef('consents.client_pk', '=', 'authorization_codes.client_pk'),
    )
    .select([
      'authorization_codes.created_at',
      'authorization_codes.scopes',
      'consents.created_at as consent_created_at',
      'consents.scopes as consent_scopes',
      'authorization_codes.client_pk',
      'authorization_codes.redirect_uri',
      'authorization_codes.code_challenge',
      'authorization_codes.expires_at',
      'authorization_codes.consumed_at',
      'users.disabled_at as user_disabled_at',
    ])
    .where('authorization_codes.code_hash', '=', codeHash)
    .executeTakeFirst();
  return (
    row && {
      clientPk: row.client_pk,
      redirectUri: row.redirect_uri,
      scopes: row.scopes,
      codeChallenge: row.code_challenge,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      consumedAt: row.consumed_at,
      userDisabledAt: row.user_disabled_at,
      consentCreatedAt: row.consent_created_at,
      consentScopes: row.consent_scopes,
    }
  );
}
