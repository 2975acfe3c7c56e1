import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidGrant, InvalidRequest, InvalidScope, UnsupportedGrantType } from '../../lib/errors.js';
import { isCodeVerifier, s256 } from '../../lib/pkce.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import type { ClientRow } from '../clients/clients.repository.js';
import { signIdToken } from '../oidc/id-token.js';
import { currentSigner } from '../oidc/keys.service.js';
import {
  findAuthorizationCode,
  findRefreshToken,
  insertAccessToken,
  insertRefreshToken,
  redeemAuthorizationCode,
  revokeGrants,
  rotateRefreshToken,
} from './oauth.repository.js';
import { normalizeScopes } from './scopes.js';

/** The token response (SPEC.md, RFC 6749 §5.1; OIDC Core §3.1.3.3). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
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
  ctx: Pick<Context, 'clock' | 'config'>,
  input: { grantId: number; userId: number; clientPk: number; scopes: string[]; withRefreshToken: boolean },
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
  });
  if (!input.withRefreshToken) return { accessToken, expiresIn };
  const refreshToken = generateSecret('refreshToken');
  await insertRefreshToken(trx, {
    tokenHash: hashSecret(refreshToken),
    grantId: input.grantId,
    at: now,
    expiresAt: new Date(now.getTime() + ctx.config.REFRESH_TOKEN_TTL_SECONDS * 1000),
  });
  return { accessToken, refreshToken, expiresIn };
}

type Parameters = Record<string, string | undefined>;

function required(params: Parameters, name: string): string {
  const value = params[name];
  if (!value) throw new InvalidRequest(`${name} is required.`);
  return value;
}

/** Why a code could not be redeemed, for the error description (nothing was written). */
async function explainRedeemFailure(
  db: Kysely<Database>,
  client: ClientRow,
  input: {
    codeHash: string;
    redirectUri: string;
    challenge: string | null;
    verifierSent: boolean;
    now: Date;
  },
): Promise<never> {
  const row = await findAuthorizationCode(db, input.codeHash);
  if (!row) throw new InvalidGrant('The code is invalid.');
  if (row.consumed_at !== null) {
    // RFC 6749 §4.1.2: a code used twice revokes every token issued from it.
    await revokeGrants(db, { codeHash: input.codeHash }, input.now);
    throw new InvalidGrant('The code was already used; the tokens issued from it are revoked.');
  }
  if (row.client_pk !== client.id) throw new InvalidGrant('The code was issued to another client.');
  if (row.expires_at.getTime() <= input.now.getTime()) throw new InvalidGrant('The code has expired.');
  if (row.redirect_uri !== input.redirectUri) {
    throw new InvalidGrant('redirect_uri differs from the one sent to authorize.');
  }
  if (row.code_challenge !== null && !input.verifierSent) {
    throw new InvalidGrant('code_verifier is required: the code was issued with a code_challenge.');
  }
  if (row.code_challenge === null && input.verifierSent) {
    // The PKCE downgrade (RFC 9700 §2.1.1): a verifier for a code issued without a challenge.
    throw new InvalidGrant('code_verifier was sent, but the code was issued without a code_challenge.');
  }
  if (row.code_challenge !== input.challenge) throw new InvalidGrant('code_verifier does not match.');
  if (row.user_disabled_at !== null) throw new InvalidGrant('The user of this code is disabled.');
  const consentStands =
    row.consent_created_at !== null &&
    row.consent_created_at.getTime() <= row.created_at.getTime() &&
    row.scopes.every((scope) => row.consent_scopes?.includes(scope));
  if (!consentStands) throw new InvalidGrant('The user has revoked the access this code was issued for.');
  throw new InvalidGrant('The code is invalid.');
}

/** RFC 6749 §4.1.3 and RFC 7636 §4.6: exchange a code for tokens, once. */
async function authorizationCodeGrant(
  db: Kysely<Database>,
  ctx: Context,
  client: ClientRow,
  params: Parameters,
): Promise<TokenResponse> {
  const code = required(params, 'code');
  const redirectUri = required(params, 'redirect_uri');
  const verifier = params.code_verifier;
  if (verifier !== undefined && !isCodeVerifier(verifier)) {
    throw new InvalidGrant(
      'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 section 4.1).',
    );
  }
  const codeHash = hashSecret(code);
  const challenge = verifier === undefined ? null : s256(verifier);
  const now = ctx.clock.now();
  // Taken first, from the process cache, so signing after the redemption needs no query and
  // cannot fail for want of a key.
  const signer = await currentSigner({ db, clock: ctx.clock });
  const accessToken = generateSecret('accessToken');
  const refreshToken = generateSecret('refreshToken');
  const expiresIn = ctx.config.ACCESS_TOKEN_TTL_SECONDS;

  const redeemed = await redeemAuthorizationCode(db, {
    codeHash,
    clientPk: client.id,
    redirectUri,
    challenge,
    now,
    accessTokenHash: hashSecret(accessToken),
    accessExpiresAt: new Date(now.getTime() + expiresIn * 1000),
    refreshTokenHash: hashSecret(refreshToken),
    refreshExpiresAt: new Date(now.getTime() + ctx.config.REFRESH_TOKEN_TTL_SECONDS * 1000),
  });
  if (!redeemed) {
    return explainRedeemFailure(db, client, {
      codeHash,
      redirectUri,
      challenge,
      verifierSent: verifier !== undefined,
      now,
    });
  }
  const idToken = redeemed.scopes.includes('openid')
    ? await signIdToken(
        db,
        ctx,
        {
          user: redeemed.user,
          clientId: client.client_id,
          scopes: redeemed.scopes,
          nonce: redeemed.nonce,
          authTime: redeemed.authTime,
          accessToken,
        },
        signer,
      )
    : undefined;
  const tokens: IssuedTokens = {
    accessToken,
    expiresIn,
    ...(redeemed.refreshIssued ? { refreshToken } : {}),
  };
  return tokenResponse(tokens, redeemed.scopes, idToken);
}

/** RFC 6749 §6, with rotation: a refresh token is exchanged once; presenting it again revokes the grant. */
async function refreshTokenGrant(
  db: Kysely<Database>,
  ctx: Context,
  client: ClientRow,
  params: Parameters,
): Promise<TokenResponse> {
  const refreshToken = required(params, 'refresh_token');
  const tokenHash = hashSecret(refreshToken);
  const now = ctx.clock.now();

  // RFC 6749 §6: a narrower scope may be asked for, never a wider one (checked against the grant
  // in the statement; an unknown or empty scope cannot be within it).
  let asked: string[] | null = null;
  if (params.scope !== undefined) {
    const unique = [...new Set(params.scope.split(' ').filter(Boolean))];
    if (unique.length === 0)
      throw new InvalidScope('scope is empty; leave it out to keep the scope of the grant.');
    // Known scopes in their canonical order; with an unknown one, as sent (it fails the check).
    const known = normalizeScopes(unique);
    asked = known.length === unique.length ? known : unique;
  }
  const accessToken = generateSecret('accessToken');
  const newRefreshToken = generateSecret('refreshToken');
  const expiresIn = ctx.config.ACCESS_TOKEN_TTL_SECONDS;
  const issued = await rotateRefreshToken(db, {
    tokenHash,
    clientPk: client.id,
    scopes: asked,
    now,
    accessTokenHash: hashSecret(accessToken),
    accessExpiresAt: new Date(now.getTime() + expiresIn * 1000),
    refreshTokenHash: hashSecret(newRefreshToken),
    refreshExpiresAt: new Date(now.getTime() + ctx.config.REFRESH_TOKEN_TTL_SECONDS * 1000),
  });
  if (!issued) return explainRefreshFailure(db, client, { tokenHash, asked, now });
  return tokenResponse({ accessToken, refreshToken: newRefreshToken, expiresIn }, issued.scopes);
}

/** Why a refresh token was refused, for the error description (nothing was written). */
async function explainRefreshFailure(
  db: Kysely<Database>,
  client: ClientRow,
  input: { tokenHash: string; asked: string[] | null; now: Date },
): Promise<never> {
  const row = await findRefreshToken(db, input.tokenHash);
  if (!row || row.revoked_at !== null) throw new InvalidGrant('The refresh token is invalid or revoked.');
  if (row.client_pk !== client.id) throw new InvalidGrant('The refresh token was issued to another client.');
  if (row.of_device) {
    throw new InvalidGrant(
      'This refresh token is of a device of the mobile app: refresh it at /api/v1/mobile/refresh.',
    );
  }
  if (row.rotated_at !== null) {
    // OAuth 2.0 Security BCP (RFC 9700 §4.14.2): reuse of a rotated refresh token means it leaked.
    await revokeGrants(db, { id: row.grant_id }, input.now);
    throw new InvalidGrant('The refresh token was already used; the grant is revoked.');
  }
  if (row.grant_revoked_at !== null) throw new InvalidGrant('The refresh token has been revoked.');
  if (row.expires_at.getTime() <= input.now.getTime())
    throw new InvalidGrant('The refresh token has expired.');
  if (row.user_disabled_at !== null) throw new InvalidGrant('The user of this refresh token is disabled.');
  const extra = (input.asked ?? []).filter((scope) => !row.scopes.includes(scope));
  if (extra.length > 0)
    throw new InvalidScope('The scope asked for exceeds the scope the refresh token was granted.');
  throw new InvalidGrant('The refresh token is invalid or revoked.');
}

function tokenResponse(tokens: IssuedTokens, scopes: string[], idToken?: string): TokenResponse {
  return {
    access_token: tokens.accessToken,
    token_type: 'Bearer',
    expires_in: tokens.expiresIn,
    scope: scopes.join(' '),
    ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
    ...(idToken ? { id_token: idToken } : {}),
  };
}

/** The grants of the token endpoint (DESIGN.md: a registry of `{ grantType, handle }`). */
const GRANTS: Record<
  string,
  (db: Kysely<Database>, ctx: Context, client: ClientRow, params: Parameters) => Promise<TokenResponse>
> = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
};

export async function handleTokenRequest(
  db: Kysely<Database>,
  ctx: Context,
  client: ClientRow,
  params: Parameters,
): Promise<TokenResponse> {
  const grantType = params.grant_type;
  if (!grantType) throw new InvalidRequest('grant_type is required.');
  const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
  if (!grant)
    throw new UnsupportedGrantType(
      'This grant_type is not supported; use authorization_code or refresh_token.',
    );
  return grant(db, ctx, client, params);
}
