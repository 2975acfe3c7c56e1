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
 * Whether the access token with this hash works (CONTRACT.md §4, SPEC.md rule 2): known, not
 * expired against `ctx.clock`, not revoked, its grant not revoked, its user and client enabled.
 * One indexed query, or none when the token cache holds a fresh answer.
 */
export async function authenticateAccessToken(
  db: Kysely<Database>,
  ctx: Context,
  tokenHash: string,
): Promise<{ ok: true; context: AccessTokenContext } | { ok: false; reason: BearerRefusal }> {
  const now = ctx.clock.now().getTime();
  const cached = ctx.tokenCache?.get(tokenHash, now);
  if (cached) return { ok: true, context: cached };
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
  if (!row || reason) return { ok: false, reason: reason ?? 'unknown access token' };
  const context: AccessTokenContext = {
    tokenHash: row.tokenHash,
    grantId: row.grantId,
    userId: row.user.id,
    clientPk: row.clientPk,
    clientId: row.clientId,
    scopes: row.scopes,
    expiresAt: row.expiresAt,
    user: row.user,
  };
  ctx.tokenCache?.set(context, now, readVersion);
  return { ok: true, context };
}
