import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { findBearerToken } from './bearer.repository.js';
import type { AccessTokenContext } from './token-cache.js';

export type { AccessTokenContext } from './token-cache.js';

/** Why a well-formed access token does not work; for the log only, never for the caller. */
export type BearerRefusal =
  | 'unknown access token'
  | 'expired access token'
  | 'access token revoked'
  | 'grant revoked'
  | 'user disabled'
  | 'client disabled';

/**
 * The token cache's answer for this token hash, when it holds a fresh one. Synchronous: on the hot
 * path (userinfo, /me, the wallet) a cached token costs no query and no promise.
 */
export function cachedAccessToken(
  ctx: Context,
  tokenHash: string,
  now: number,
): AccessTokenContext | undefined {
  return ctx.tokenCache?.get(tokenHash, now);
}

/**
 * Whether the access token with this hash works (docs/oauth.md): known, not
 * expired, not revoked, its grant not revoked, its user and client enabled; in one indexed query.
 * A working token is cached; a refused one answers why (for the log only, never for the caller).
 */
export async function lookUpAccessToken(
  db: Kysely<Database>,
  ctx: Context,
  tokenHash: string,
  now: number,
): Promise<AccessTokenContext | BearerRefusal> {
  const readVersion = ctx.tokenCache?.readVersion ?? 0;
  const row = await findBearerToken(db, tokenHash);
  const reason: BearerRefusal | undefined = !row
    ? 'unknown access token'
    : row.expiresAt.getTime() <= ctx.clock.now().getTime()
      ? 'expired access token'
      : row.tokenRevokedAt
        ? 'access token revoked'
        : row.grantRevokedAt
          ? 'grant revoked'
          : row.user.disabledAt
            ? 'user disabled'
            : row.clientDisabledAt
              ? 'client disabled'
              : undefined;
  if (!row || reason) return reason ?? 'unknown access token';
  const context: AccessTokenContext = {
    tokenHash: row.tokenHash,
    grantId: row.grantId,
    userId: row.user.id,
    clientPk: row.clientPk,
    clientId: row.clientId,
    scopes: row.scopes,
    expiresAt: row.expiresAt,
    user: row.user,
    jkt: row.jkt,
  };
  ctx.tokenCache?.set(context, now, readVersion);
  return context;
}
