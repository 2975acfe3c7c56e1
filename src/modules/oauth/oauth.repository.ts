import { type Kysely, type Selectable, sql } from 'kysely';
import type {
  AuthorizationCodesTable,
  AuthorizationRequestsTable,
  Database,
  GrantsTable,
  RefreshTokensTable,
  UsersTable,
} from '../../db/schema.js';

export type AuthorizationRequestRow = Selectable<AuthorizationRequestsTable>;
export type AuthorizationCodeRow = Selectable<AuthorizationCodesTable>;
export type GrantRow = Selectable<GrantsTable>;
export type RefreshTokenRow = Selectable<RefreshTokensTable>;

// ---- pending authorization requests -------------------------------------------------------

export async function insertAuthorizationRequest(
  db: Kysely<Database>,
  row: Omit<AuthorizationRequestRow, 'consumed_at'>,
): Promise<void> {
  await db.insertInto('authorization_requests').values(row).execute();
}

/** A pending request that is neither used nor expired. */
export function findPendingRequest(db: Kysely<Database>, idHash: string, now: Date) {
  return db
    .selectFrom('authorization_requests')
    .selectAll()
    .where('id_hash', '=', idHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Uses a pending request up, atomically: of two decisions on one request, one wins. */
export function consumePendingRequest(db: Kysely<Database>, idHash: string, now: Date) {
  return db
    .updateTable('authorization_requests')
    .set({ consumed_at: now })
    .where('id_hash', '=', idHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

// ---- codes ----------------------------------------------------------------------------------

export async function insertAuthorizationCode(
  db: Kysely<Database>,
  row: Omit<AuthorizationCodeRow, 'consumed_at'>,
): Promise<void> {
  await db.insertInto('authorization_codes').values(row).execute();
}

// ---- grants and tokens ----------------------------------------------------------------------

export function insertGrant(
  db: Kysely<Database>,
  grant: {
    userId: number;
    clientPk: number;
    scopes: string[];
    codeHash: string | null;
    authTime: Date;
    at: Date;
  },
): Promise<{ id: number }> {
  return db
    .insertInto('grants')
    .values({
      user_id: grant.userId,
      client_pk: grant.clientPk,
      scopes: grant.scopes,
      code_hash: grant.codeHash,
      auth_time: grant.authTime,
      created_at: grant.at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** Revokes grants: every access and refresh token issued under them stops working at once. */
export async function revokeGrants(
  db: Kysely<Database>,
  where: { id?: number; codeHash?: string },
  at: Date,
): Promise<void> {
  let query = db.updateTable('grants').set({ revoked_at: at }).where('revoked_at', 'is', null);
  if (where.id !== undefined) query = query.where('id', '=', where.id);
  if (where.codeHash !== undefined) query = query.where('code_hash', '=', where.codeHash);
  await query.execute();
}

/**
 * Ends what a user's or a client's access rests on, for app revocation and for disabling a user or
 * a client: every live grant is revoked (so all of its access and refresh tokens stop at once),
 * every code not yet redeemed is deleted, so that no code can mint tokens afterwards, and every
 * device of the mobile app signed in under them is signed out. Run it in the
 * transaction of the change it follows. At least one of `userId` and `clientPk` is required.
 */
export async function endAccess(
  db: Kysely<Database>,
  where: { userId?: number; clientPk?: number },
  at: Date,
): Promise<{ grantsRevoked: number; codesDeleted: number }> {
  if (where.userId === undefined && where.clientPk === undefined)
    throw new Error('endAccess needs a user or a client');
  let grants = db.updateTable('grants').set({ revoked_at: at }).where('revoked_at', 'is', null);
  let codes = db.deleteFrom('authorization_codes').where('consumed_at', 'is', null);
  // The app's devices signed in under those grants are signed out with them (their key too).
  let devices = db.updateTable('mobile_devices').set({ revoked_at: at }).where('revoked_at', 'is', null);
  if (where.userId !== undefined) {
    grants = grants.where('user_id', '=', where.userId);
    codes = codes.where('user_id', '=', where.userId);
    devices = devices.where('user_id', '=', where.userId);
  }
  if (where.clientPk !== undefined) {
    grants = grants.where('client_pk', '=', where.clientPk);
    codes = codes.where('client_pk', '=', where.clientPk);
    devices = devices.where('client_pk', '=', where.clientPk);
  }
  await devices.execute();
  const revoked = await grants.executeTakeFirst();
  const deleted = await codes.executeTakeFirst();
  return { grantsRevoked: Number(revoked.numUpdatedRows), codesDeleted: Number(deleted.numDeletedRows) };
}

export async function insertAccessToken(
  db: Kysely<Database>,
  token: {
    tokenHash: string;
    grantId: number;
    userId: number;
    clientPk: number;
    scopes: string[];
    at: Date;
    expiresAt: Date;
  },
): Promise<void> {
  await db
    .insertInto('access_tokens')
    .values({
      token_hash: token.tokenHash,
      grant_id: token.grantId,
      user_id: token.userId,
      client_pk: token.clientPk,
      scopes: token.scopes,
      created_at: token.at,
      expires_at: token.expiresAt,
    })
    .execute();
}

export async function insertRefreshToken(
  db: Kysely<Database>,
  token: { tokenHash: string; grantId: number; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('refresh_tokens')
    .values({
      token_hash: token.tokenHash,
      grant_id: token.grantId,
      created_at: token.at,
      expires_at: token.expiresAt,
    })
    .execute();
}

/**
 * Marks a refresh token rotated and returns it with its grant, or undefined when it is unknown,
 * already rotated or revoked. Atomic, like codes: a token can be exchanged once.
 */
/**
 * RFC 6749 §6 with rotation, in one statement (one round trip, atomic on its own): uses up the
 * refresh token and issues the new access and refresh tokens under its grant — only if the token is
 * unused, unrevoked and unexpired, of this client, of a live grant and user, and `scopes` (a
 * narrower set asked for, or null for the grant's) are within the grant. Answers the grant, user
 * and scopes of the new tokens, or undefined when any rule refused (nothing was written; the
 * caller tells which rule from `findRefreshToken`). Two concurrent uses of one token: the second
 * waits on the row lock, then finds it rotated.
 */
export async function rotateRefreshToken(
  db: Kysely<Database>,
  input: {
    tokenHash: string;
    clientPk: number;
    scopes: string[] | null;
    now: Date;
    accessTokenHash: string;
    accessExpiresAt: Date;
    refreshTokenHash: string;
    refreshExpiresAt: Date;
  },
): Promise<{ grant_id: number; user_id: number; scopes: string[] } | undefined> {
  const result = await sql<{ grant_id: number; user_id: number; scopes: string[] }>`
    with rotated as (
      update refresh_tokens r set rotated_at = ${input.now}
      from grants g join users u on u.id = g.user_id
      where g.id = r.grant_id
        and r.token_hash = ${input.tokenHash}
        and r.rotated_at is null and r.revoked_at is null and r.expires_at > ${input.now}
        and g.client_pk = ${input.clientPk} and g.revoked_at is null
        and u.disabled_at is null
        and (${input.scopes}::text[] is null or ${input.scopes}::text[] <@ g.scopes)
        -- A device of the mobile app refreshes only with its signature (/api/v1/mobile/refresh).
        and not exists (select 1 from mobile_devices d where d.grant_id = g.id)
      returning r.grant_id, g.user_id, coalesce(${input.scopes}::text[], g.scopes) as scopes
    ), access as (
      insert into access_tokens (token_hash, grant_id, user_id, client_pk, scopes, created_at, expires_at)
      select ${input.accessTokenHash}, grant_id, user_id, ${input.clientPk}, scopes, ${input.now},
        ${input.accessExpiresAt}
      from rotated
    ), refresh as (
      insert into refresh_tokens (token_hash, grant_id, created_at, expires_at)
      select ${input.refreshTokenHash}, grant_id, ${input.now}, ${input.refreshExpiresAt} from rotated
    )
    select grant_id, user_id, scopes from rotated`.execute(db);
  return result.rows[0];
}

/** Marks a refresh token used (rotated) and answers its grant, when it was unused and unrevoked. */
export function markRefreshTokenRotated(db: Kysely<Database>, tokenHash: string, now: Date) {
  return db
    .updateTable('refresh_tokens')
    .set({ rotated_at: now })
    .from('grants')
    .whereRef('grants.id', '=', 'refresh_tokens.grant_id')
    .where('refresh_tokens.token_hash', '=', tokenHash)
    .where('refresh_tokens.rotated_at', 'is', null)
    .where('refresh_tokens.revoked_at', 'is', null)
    .returning([
      'refresh_tokens.grant_id',
      'refresh_tokens.expires_at',
      'grants.user_id',
      'grants.client_pk',
      'grants.scopes',
      'grants.auth_time',
      'grants.revoked_at as grant_revoked_at',
    ])
    .executeTakeFirst();
}

export function findRefreshToken(db: Kysely<Database>, tokenHash: string) {
  return db
    .selectFrom('refresh_tokens')
    .innerJoin('grants', 'grants.id', 'refresh_tokens.grant_id')
    .innerJoin('users', 'users.id', 'grants.user_id')
    .innerJoin('clients', 'clients.id', 'grants.client_pk')
    .select([
      'refresh_tokens.grant_id',
      'refresh_tokens.created_at',
      'refresh_tokens.expires_at',
      'refresh_tokens.rotated_at',
      'refresh_tokens.revoked_at',
      'grants.revoked_at as grant_revoked_at',
      'grants.client_pk',
      'grants.scopes',
      'grants.user_id',
      'users.username',
      'users.disabled_at as user_disabled_at',
      'clients.client_id',
      'clients.disabled_at as client_disabled_at',
    ])
    .select((eb) =>
      eb
        .exists(
          eb.selectFrom('mobile_devices').select('id').whereRef('mobile_devices.grant_id', '=', 'grants.id'),
        )
        .as('of_device'),
    )
    .where('refresh_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export function findAccessToken(db: Kysely<Database>, tokenHash: string) {
  return db
    .selectFrom('access_tokens')
    .innerJoin('grants', 'grants.id', 'access_tokens.grant_id')
    .innerJoin('users', 'users.id', 'access_tokens.user_id')
    .innerJoin('clients', 'clients.id', 'access_tokens.client_pk')
    .select([
      'access_tokens.grant_id',
      'access_tokens.client_pk',
      'access_tokens.scopes',
      'access_tokens.user_id',
      'access_tokens.created_at',
      'access_tokens.expires_at',
      'access_tokens.revoked_at',
      'grants.revoked_at as grant_revoked_at',
      'users.username',
      'users.disabled_at as user_disabled_at',
      'clients.client_id',
      'clients.disabled_at as client_disabled_at',
    ])
    .where('access_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function revokeAccessToken(db: Kysely<Database>, tokenHash: string, at: Date): Promise<void> {
  await db
    .updateTable('access_tokens')
    .set({ revoked_at: at })
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .execute();
}

export function findClientById(db: Kysely<Database>, id: number) {
  return db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface RedeemedCode {
  grantId: number;
  scopes: string[];
  nonce: string | null;
  authTime: Date;
  refreshIssued: boolean;
  user: Selectable<UsersTable>;
}

/**
 * Redeems a code in ONE statement (RFC 6749 §4.1.3, RFC 7636 §4.6): it is marked used only if it
 * is unused, this client's, unexpired, for this redirect_uri, with the matching PKCE challenge
 * (`challenge` is S256 of the verifier, or null when none was sent: a code with a challenge then
 * fails, and a verifier for a code without one fails too), and its user is enabled; the grant, the
 * access token and (with offline_access) the refresh token are inserted by the same statement.
 * Atomic without an explicit transaction, and one round trip on the hot path. Returns undefined
 * when any condition fails; nothing is written then.
 */
export async function redeemAuthorizationCode(
  db: Kysely<Database>,
  input: {
    codeHash: string;
    clientPk: number;
    redirectUri: string;
    challenge: string | null;
    now: Date;
    accessTokenHash: string;
    accessExpiresAt: Date;
    refreshTokenHash: string;
    refreshExpiresAt: Date;
  },
): Promise<RedeemedCode | undefined> {
  const result = await sql<
    Selectable<UsersTable> & {
      r_grant_id: number;
      r_scopes: string[];
      r_nonce: string | null;
      r_auth_time: Date;
      r_refresh_issued: boolean;
    }
  >`
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
      insert into grants (user_id, client_pk, scopes, code_hash, auth_time, created_at)
      select user_id, client_pk, scopes, code_hash, auth_time, ${input.now} from code
      returning id
    ), a as (
      insert into access_tokens (token_hash, grant_id, user_id, client_pk, scopes, created_at, expires_at)
      select ${input.accessTokenHash}, g.id, code.user_id, code.client_pk, code.scopes, ${input.now}, ${input.accessExpiresAt}
      from code, g
      returning grant_id
    ), r as (
      insert into refresh_tokens (token_hash, grant_id, created_at, expires_at)
      select ${input.refreshTokenHash}, g.id, ${input.now}, ${input.refreshExpiresAt}
      from code, g
      where 'offline_access' = any(code.scopes)
      returning grant_id
    )
    select u.*, g.id as r_grant_id, code.scopes as r_scopes, code.nonce as r_nonce, code.auth_time as r_auth_time,
      exists (select 1 from r) as r_refresh_issued
    from code, g, a, users u
    where u.id = code.user_id
  `.execute(db);
  const row = result.rows[0];
  if (!row) return undefined;
  const { r_grant_id, r_scopes, r_nonce, r_auth_time, r_refresh_issued, ...user } = row;
  return {
    grantId: r_grant_id,
    scopes: r_scopes,
    nonce: r_nonce,
    authTime: r_auth_time,
    refreshIssued: r_refresh_issued,
    user,
  };
}

/** A code as stored, to say why a redemption failed. */
export function findAuthorizationCode(db: Kysely<Database>, codeHash: string) {
  return db
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
}
