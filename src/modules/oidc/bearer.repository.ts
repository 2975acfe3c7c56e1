import type { Kysely, Selectable } from 'kysely';
import type { Database, UsersTable } from '../../db/schema.js';

/** A `users` row, until this module reads the `User` of accounts/user.ts. */
type UserRow = Selectable<UsersTable>;

/** An access token with everything that decides whether it still works, and its user. */
export interface BearerTokenRow {
  tokenHash: string;
  grantId: number;
  clientPk: number;
  clientId: string;
  scopes: string[];
  expiresAt: Date;
  tokenRevokedAt: Date | null;
  grantRevokedAt: Date | null;
  clientDisabledAt: Date | null;
  user: UserRow;
}

/**
 * One query per bearer request: the token by its hash (the primary key) joined with its grant,
 * user and client, each by primary key. The caller decides validity (expiry, revocation, disabled
 * user or client), so that the log can say which rule refused it.
 */
export async function findBearerToken(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<BearerTokenRow | undefined> {
  const row = await db
    .selectFrom('access_tokens as t')
    .innerJoin('grants as g', 'g.id', 't.grant_id')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('clients as c', 'c.id', 't.client_pk')
    .selectAll('u')
    .select([
      't.token_hash as t_token_hash',
      't.grant_id as t_grant_id',
      't.client_pk as t_client_pk',
      't.scopes as t_scopes',
      't.expires_at as t_expires_at',
      't.revoked_at as t_revoked_at',
      'g.revoked_at as g_revoked_at',
      'c.client_id as c_client_id',
      'c.disabled_at as c_disabled_at',
    ])
    .where('t.token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const {
    t_token_hash,
    t_grant_id,
    t_client_pk,
    t_scopes,
    t_expires_at,
    t_revoked_at,
    g_revoked_at,
    c_client_id,
    c_disabled_at,
    ...user
  } = row;
  return {
    tokenHash: t_token_hash,
    grantId: t_grant_id,
    clientPk: t_client_pk,
    clientId: c_client_id,
    scopes: t_scopes,
    expiresAt: t_expires_at,
    tokenRevokedAt: t_revoked_at,
    grantRevokedAt: g_revoked_at,
    clientDisabledAt: c_disabled_at,
    user,
  };
}
