import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidRequest } from '../../lib/errors.js';
import { hashSecret } from '../../lib/secrets.js';
import type { Client } from '../clients/client.js';
import { findAccessToken, findRefreshToken, revokeAccessToken, revokeGrants } from './grants.repository.js';

type Parameters = Record<string, string | undefined>;

function tokenParameter(params: Parameters): string {
  const token = params.token;
  if (!token) throw new InvalidRequest('token is required.');
  return token;
}

/**
 * RFC 7009. A client revokes only its own tokens; anything else (unknown, another client's,
 * already revoked) is answered the same way, so nothing is revealed. Revoking a refresh token
 * revokes its whole grant (RFC 7009 §2.1: and the access tokens issued with it).
 */
export async function revokeToken(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  params: Parameters,
): Promise<void> {
  const tokenHash = hashSecret(tokenParameter(params));
  const now = ctx.clock.now();
  const lookups =
    params.token_type_hint === 'refresh_token'
      ? ([findRefreshToken, findAccessToken] as const)
      : ([findAccessToken, findRefreshToken] as const);
  for (const lookup of lookups) {
    const token = await lookup(db, tokenHash);
    if (!token) continue;
    if (token.clientPk !== client.id) return;
    if (lookup === findAccessToken) await revokeAccessToken(db, tokenHash, now);
    else await revokeGrants(db, { id: token.grantId }, now);
    return;
  }
}

/** The RFC 7662 answer. Inactive tokens say nothing but `active: false`. */
export type IntrospectionResponse =
  | { active: false }
  | {
      active: true;
      scope: string;
      client_id: string;
      username: string;
      token_type: 'Bearer' | 'DPoP' | 'refresh_token';
      exp: number;
      iat: number;
      sub: string;
      iss: string;
      /** RFC 9449 §6.2: the key a bound token is bound to. */
      cnf?: { jkt: string };
    };

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** RFC 7662: whether a token of this client is active, and what it grants. */
export async function introspectToken(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  params: Parameters,
): Promise<IntrospectionResponse> {
  const tokenHash = hashSecret(tokenParameter(params));
  const now = ctx.clock.now().getTime();
  const access = await findAccessToken(db, tokenHash);
  const refresh = access ? undefined : await findRefreshToken(db, tokenHash);
  const token = access ?? refresh;
  if (!token || token.clientPk !== client.id) return { active: false };
  const revoked =
    token.revokedAt !== null ||
    token.grantRevokedAt !== null ||
    (refresh !== undefined && refresh.rotatedAt !== null);
  const active =
    !revoked &&
    token.expiresAt.getTime() > now &&
    token.userDisabledAt === null &&
    token.clientDisabledAt === null;
  if (!active) return { active: false };
  return {
    active: true,
    scope: token.scopes.join(' '),
    client_id: token.clientId,
    username: token.username,
    token_type: access ? (access.jkt === null ? 'Bearer' : 'DPoP') : 'refresh_token',
    exp: seconds(token.expiresAt),
    iat: seconds(token.createdAt),
    sub: String(token.userId),
    iss: ctx.config.PUBLIC_URL,
    ...(token.jkt === null ? {} : { cnf: { jkt: token.jkt } }),
  };
}
