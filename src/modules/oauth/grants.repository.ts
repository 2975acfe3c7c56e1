import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

/** An access or refresh token with what decides whether it still works (introspection, revocation). */
export interface StoredToken {
  grantId: number;
  clientPk: number;
  clientId: string;
  userId: number;
  username: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  grantRevokedAt: Date | null;
  userDisabledAt: Date | null;
  clientDisabledAt: Date | null;
  /** RFC 9449 §6: the thumbprint of the DPoP key the token is bound to; null for a bearer token. */
  jkt: string | null;
}

export type StoredAccessToken = StoredToken;

export interface StoredRefreshToken extends StoredToken {
  rotatedAt: Date | null;
  /** The grant is a device's of the mobile app (it refreshes with its signature only). */
  ofDevice: boolean;
}

/** The rows of a new access and refresh token pair, stored in the statement that grants it. */
export interface NewTokenRows {
  accessTokenHash: string;
  accessExpiresAt: Date;
  refreshTokenHash: string;
  refreshExpiresAt: Date;
}

/** A refresh token just marked used, with its grant. */
export interface RotatedRefreshToken {
  grantId: number;
  expiresAt: Date;
  userId: number;
  clientPk: number;
  scopes: string[];
  authTime: Date;
  grantRevokedAt: Date | null;
}

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

/**
 * Revokes the live grants that match every given condition: all their access and refresh tokens
 * stop working at once. Answers how many were revoked.
 */
export async function revokeGrants(
  db: Kysely<Database>,
  where: { id?: number; codeHash?: string; userId?: number; clientPk?: number },
  at: Date,
): Promise<number> {
  let query = db.updateTable('grants').set({ revoked_at: at }).where('revoked_at', 'is', null);
  if (where.id !== undefined) query = query.where('id', '=', where.id);
  if (where.codeHash !== undefined) query = query.where('code_hash', '=', where.codeHash);
  if (where.userId !== undefined) query = query.where('user_id', '=', where.userId);
  if (where.clientPk !== undefined) query = query.where('client_pk', '=', where.clientPk);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Ends the access tokens of a grant that are still live (a refresh replaces them). */
export async function revokeAccessTokensOfGrant(
  db: Kysely<Database>,
  grantId: number,
  at: Date,
): Promise<void> {
  await db
    .updateTable('access_tokens')
    .set({ revoked_at: at })
    .where('grant_id', '=', grantId)
    .where('revoked_at', 'is', null)
    .execute();
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
    /** RFC 9449 §6: the DPoP key it is bound to. */
    jkt?: string | null;
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
      jkt: token.jkt ?? null,
    })
    .execute();
}

export async function insertRefreshToken(
  db: Kysely<Database>,
  token: { tokenHash: string; grantId: number; at: Date; expiresAt: Date; jkt?: string | null },
): Promise<void> {
  await db
    .insertInto('refresh_tokens')
    .values({
      token_hash: token.tokenHash,
      grant_id: token.grantId,
      created_at: token.at,
      expires_at: token.expiresAt,
      jkt: token.jkt ?? null,
    })
    .execute();
}

/** Marks a refresh token used (rotated) and answers it with its grant, when it was unused and unrevoked. */
export async function markRefreshTokenRotated(
  db: Kysely<Database>,
  tokenHash: string,
  now: Date,
): Promise<RotatedRefreshToken | undefined> {
  return db
    .updateTable('refresh_tokens')
    .set({ rotated_at: now })
    .from('grants')
    .whereRef('grants.id', '=', 'refresh_tokens.grant_id')
    .where('refresh_tokens.token_hash', '=', tokenHash)
    .where('refresh_tokens.rotated_at', 'is', null)
    .where('refresh_tokens.revoked_at', 'is', null)
    .returning([
      'refresh_tokens.grant_id as grantId',
      'refresh_tokens.expires_at as expiresAt',
      'grants.user_id as userId',
      'grants.client_pk as clientPk',
      'grants.scopes',
      'grants.auth_time as authTime',
      'grants.revoked_at as grantRevokedAt',
    ])
    .executeTakeFirst();
}

/**
 * An access token joined to its grant, user and client, each by primary key: the one statement of
 * every lookup of a presented access token (the bearer check's too), which selects what it needs.
 */
export function selectAccessTokenWithOwners(db: Kysely<Database>) {
  return db
    .selectFrom('access_tokens as t')
    .innerJoin('grants as g', 'g.id', 't.grant_id')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('clients as c', 'c.id', 't.client_pk');
}

/** What a token's grant, user and client say about it (the aliases of both lookups below). */
const OWNERS_STATE = [
  'g.revoked_at as grantRevokedAt',
  'u.username',
  'u.disabled_at as userDisabledAt',
  'c.client_id as clientId',
  'c.disabled_at as clientDisabledAt',
] as const;

/** A refresh token as stored. One statement, with read-only joins to its user and client. */
export async function findRefreshToken(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<StoredRefreshToken | undefined> {
  const row = await db
    .selectFrom('refresh_tokens as t')
    .innerJoin('grants as g', 'g.id', 't.grant_id')
    .innerJoin('users as u', 'u.id', 'g.user_id')
    .innerJoin('clients as c', 'c.id', 'g.client_pk')
    .select([
      't.grant_id as grantId',
      't.created_at as createdAt',
      't.expires_at as expiresAt',
      't.rotated_at as rotatedAt',
      't.revoked_at as revokedAt',
      't.jkt',
      'g.client_pk as clientPk',
      'g.scopes',
      'g.user_id as userId',
    ])
    .select(OWNERS_STATE)
    .select((eb) =>
      eb
        .exists(eb.selectFrom('mobile_devices').select('id').whereRef('mobile_devices.grant_id', '=', 'g.id'))
        .as('ofDevice'),
    )
    .where('t.token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row && { ...row, ofDevice: Boolean(row.ofDevice) };
}

/** An access token as stored, for introspection and revocation. */
export function findAccessToken(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<StoredAccessToken | undefined> {
  return selectAccessTokenWithOwners(db)
    .select([
      't.grant_id as grantId',
      't.client_pk as clientPk',
      't.scopes',
      't.user_id as userId',
      't.created_at as createdAt',
      't.expires_at as expiresAt',
      't.revoked_at as revokedAt',
      't.jkt',
    ])
    .select(OWNERS_STATE)
    .where('t.token_hash', '=', tokenHash)
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

/** The user's live grants and their clients, for the data export: never a code or token hash. */
export function listLiveGrantsOfUser(db: Kysely<Database>, userId: number) {
  return sql<{ clientId: string; clientName: string; scopes: string[]; authTime: Date; createdAt: Date }>`
    select c.client_id as "clientId", c.name as "clientName", g.scopes, g.auth_time as "authTime",
    g.created_at as "createdAt" from grants g join clients c on c.id = g.client_pk
    where g.user_id = ${userId} and g.revoked_at is null order by g.id`.execute(db);
}

/**
 * How many users received an access token of one client on each UTC day of [from, to), for its
 * owners' activity page: the (client_pk, created_at, user_id) index answers it alone. Tokens are
 * purged once expired (src/modules/housekeeping), so only the days they are kept are counted.
 */
export async function countActiveUsersPerDay(
  db: Kysely<Database>,
  clientPk: number,
  from: Date,
  to: Date,
): Promise<Array<{ day: string; users: number }>> {
  const result = await sql<{ day: string; users: string }>`
    select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(distinct user_id) as users
    from access_tokens where client_pk = ${clientPk} and created_at >= ${from} and created_at < ${to}
    group by 1`.execute(db);
  return result.rows.map((row) => ({ day: row.day, users: Number(row.users) }));
}
