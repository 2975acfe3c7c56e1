import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { toUser, USER_COLUMNS, type User } from '../accounts/user.js';
import { selectAccessTokenWithOwners } from '../oauth/grants.repository.js';

/** An access token with everything that decides whether it still works, and its user. */
export interface BearerToken {
  tokenHash: string;
  grantId: number;
  clientPk: number;
  clientId: string;
  scopes: string[];
  expiresAt: Date;
  tokenRevokedAt: Date | null;
  grantRevokedAt: Date | null;
  clientDisabledAt: Date | null;
  user: User;
  jkt: string | null;
}

const USER_SELECT = USER_COLUMNS.map((column) => `u.${column}` as const);

/**
 * One query per bearer request (the hot path): the token by its hash (the primary key), with its
 * grant, user and client. The caller decides validity, so that the log can say which rule refused it.
 */
export async function findBearerToken(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<BearerToken | undefined> {
  const row = await selectAccessTokenWithOwners(db)
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
      't.jkt as t_jkt',
    ])
    .select(USER_SELECT)
    .where('t.token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    tokenHash: row.t_token_hash,
    grantId: row.t_grant_id,
    clientPk: row.t_client_pk,
    clientId: row.c_client_id,
    scopes: row.t_scopes,
    expiresAt: row.t_expires_at,
    tokenRevokedAt: row.t_revoked_at,
    grantRevokedAt: row.g_revoked_at,
    clientDisabledAt: row.c_disabled_at,
    user: toUser(row),
    jkt: row.t_jkt,
  };
}
