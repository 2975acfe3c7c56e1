import type { Kysely, Selectable } from 'kysely';
import type { AuthorizationRequestsTable, Database } from '../../db/schema.js';

/** An authorize request stored while the user signs in or decides (its checks already passed). */
export interface PendingRequest {
  clientPk: number;
  redirectUri: string;
  scopes: string[];
  state: string;
  nonce: string | null;
  codeChallenge: string | null;
  /** The `prompt` values, space-separated, or null. */
  prompt: string | null;
  maxAge: number | null;
  requireMfa: boolean;
  /** The browser session present when the request was stored, or null. */
  staleSessionHash: string | null;
}

function toPendingRequest(row: Selectable<AuthorizationRequestsTable>): PendingRequest {
  return {
    clientPk: row.client_pk,
    redirectUri: row.redirect_uri,
    scopes: row.scopes,
    state: row.state,
    nonce: row.nonce,
    codeChallenge: row.code_challenge,
    prompt: row.prompt,
    maxAge: row.max_age,
    requireMfa: row.require_mfa,
    staleSessionHash: row.stale_session_hash,
  };
}

export async function insertAuthorizationRequest(
  db: Kysely<Database>,
  request: PendingRequest & { idHash: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('authorization_requests')
    .values({
      id_hash: request.idHash,
      client_pk: request.clientPk,
      redirect_uri: request.redirectUri,
      scopes: request.scopes,
      state: request.state,
      nonce: request.nonce,
      code_challenge: request.codeChallenge,
      prompt: request.prompt,
      max_age: request.maxAge,
      require_mfa: request.requireMfa,
      stale_session_hash: request.staleSessionHash,
      created_at: request.at,
      expires_at: request.expiresAt,
    })
    .execute();
}

/** A pending request that is neither used nor expired. */
export async function findPendingRequest(
  db: Kysely<Database>,
  idHash: string,
  now: Date,
): Promise<PendingRequest | undefined> {
  const row = await db
    .selectFrom('authorization_requests')
    .selectAll()
    .where('id_hash', '=', idHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row && toPendingRequest(row);
}

/** Uses a pending request up, atomically: of two decisions on one request, one wins. */
export async function consumePendingRequest(
  db: Kysely<Database>,
  idHash: string,
  now: Date,
): Promise<PendingRequest | undefined> {
  const row = await db
    .updateTable('authorization_requests')
    .set({ consumed_at: now })
    .where('id_hash', '=', idHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
  return row && toPendingRequest(row);
}
