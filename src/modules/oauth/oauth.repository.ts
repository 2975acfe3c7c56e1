import type { Kysely, Selectable } from 'kysely';
import type {
  AuthorizationCodesTable,
  AuthorizationRequestsTable,
  Database,
  GrantsTable,
  RefreshTokensTable,
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

/**
 * Marks a code used and returns it, or undefined when it is unknown or was used before.
 * One statement, so of N parallel exchanges exactly one gets the row (DESIGN.md: single-use
 * things are consumed atomically).
 */
export function consumeAuthorizationCode(db: Kysely<Database>, codeHash: string, now: Date) {
  return db
    .updateTable('authorization_codes')
    .set({ consumed_at: now })
    .where('code_hash', '=', codeHash)
    .where('consumed_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function authorizationCodeWasUsed(db: Kysely<Database>, codeHash: string): Promise<boolean> {
  const row = await db
    .selectFrom('authorization_codes')
    .select('code_hash')
    .where('code_hash', '=', codeHash)
    .where('consumed_at', 'is not', null)
    .executeTakeFirst();
  return row !== undefined;
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
export function rotateRefreshToken(db: Kysely<Database>, tokenHash: string, now: Date) {
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
