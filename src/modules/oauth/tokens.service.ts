import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { insertAccessToken, insertRefreshToken, type NewTokenRows } from './grants.repository.js';

/** The token response (RFC 6749 §5.1; OIDC Core §3.1.3.3). */
export interface TokenResponse {
  access_token: string;
  /** RFC 9449 §5: `DPoP` when the access token is bound to a DPoP key. */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope: string;
  refresh_token?: string;
  id_token?: string;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken?: string;
  expiresIn: number;
}

/**
 * Mints an access token (and a refresh token when asked) under a grant. Runs inside the caller's
 * transaction, so a token set is stored completely or not at all. Shared by the token endpoint and
 * the mobile sign-in.
 */
export async function issueTokenSet(
  trx: Kysely<Database>,
  ctx: Context,
  input: {
    grantId: number;
    userId: number;
    clientPk: number;
    scopes: string[];
    withRefreshToken: boolean;
    /** RFC 9449 §5: the DPoP key the access token (and the refresh token, `refreshJkt`) is bound to. */
    jkt?: string | null;
    refreshJkt?: string | null;
  },
): Promise<IssuedTokens> {
  const now = ctx.clock.now();
  const accessToken = generateSecret('accessToken');
  const expiresIn = ctx.config.ACCESS_TOKEN_TTL_SECONDS;
  await insertAccessToken(trx, {
    tokenHash: hashSecret(accessToken),
    grantId: input.grantId,
    userId: input.userId,
    clientPk: input.clientPk,
    scopes: input.scopes,
    at: now,
    expiresAt: new Date(now.getTime() + expiresIn * 1000),
    jkt: input.jkt ?? null,
  });
  if (!input.withRefreshToken) return { accessToken, expiresIn };
  const refreshToken = generateSecret('refreshToken');
  await insertRefreshToken(trx, {
    tokenHash: hashSecret(refreshToken),
    grantId: input.grantId,
    at: now,
    expiresAt: new Date(now.getTime() + ctx.config.REFRESH_TOKEN_TTL_SECONDS * 1000),
    jkt: input.refreshJkt ?? null,
  });
  return { accessToken, refreshToken, expiresIn };
}

/** A new access and refresh token: the secrets for the response, the rows for the statement that grants them. */
export interface NewTokenPair extends IssuedTokens, NewTokenRows {
  refreshToken: string;
}

/** A token pair to store in one statement (a code's redemption, a refresh token's rotation). */
export function newTokenPair(ctx: Context, now: Date): NewTokenPair {
  const accessToken = generateSecret('accessToken');
  const refreshToken = generateSecret('refreshToken');
  const expiresIn = ctx.config.ACCESS_TOKEN_TTL_SECONDS;
  return {
    accessToken,
    refreshToken,
    expiresIn,
    accessTokenHash: hashSecret(accessToken),
    accessExpiresAt: new Date(now.getTime() + expiresIn * 1000),
    refreshTokenHash: hashSecret(refreshToken),
    refreshExpiresAt: new Date(now.getTime() + ctx.config.REFRESH_TOKEN_TTL_SECONDS * 1000),
  };
}

/** The token response of a token set (RFC 6749 §5.1); `jkt`: the DPoP key the access token is bound to. */
export function tokenResponse(
  tokens: IssuedTokens,
  scopes: string[],
  idToken?: string,
  jkt: string | null = null,
): TokenResponse {
  return {
    access_token: tokens.accessToken,
    token_type: jkt === null ? 'Bearer' : 'DPoP',
    expires_in: tokens.expiresIn,
    scope: scopes.join(' '),
    ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
    ...(idToken ? { id_token: idToken } : {}),
  };
}
