import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

/** An initial access token as its owner sees it: never the token or its hash. */
export interface RegistrationTokenRow {
  id: number;
  ownerUserId: number | null;
  createdBy: string;
  usesLeft: number;
  createdAt: Date;
  expiresAt: Date;
}

export async function insertRegistrationToken(
  db: Kysely<Database>,
  token: {
    tokenHash: string;
    ownerUserId: number | null;
    createdBy: string;
    uses: number;
    at: Date;
    expiresAt: Date;
  },
): Promise<RegistrationTokenRow> {
  const row = await db
    .insertInto('registration_tokens')
    .values({
      token_hash: token.tokenHash,
      owner_user_id: token.ownerUserId,
      created_by: token.createdBy,
      uses_left: token.uses,
      created_at: token.at,
      expires_at: token.expiresAt,
    })
    .returning(['id', 'owner_user_id', 'created_by', 'uses_left', 'created_at', 'expires_at'])
    .executeTakeFirstOrThrow();
  return toRow(row);
}

function toRow(row: {
  id: number | string;
  owner_user_id: number | null;
  created_by: string;
  uses_left: number;
  created_at: Date;
  expires_at: Date;
}): RegistrationTokenRow {
  return {
    id: Number(row.id),
    ownerUserId: row.owner_user_id,
    createdBy: row.created_by,
    usesLeft: row.uses_left,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/**
 * Takes one use of an unexpired token with uses left, in one statement: two registrations racing
 * for its last use cannot both have it. Undefined for an unknown, used-up or expired token.
 */
export async function takeRegistrationTokenUse(
  db: Kysely<Database>,
  tokenHash: string,
  now: Date,
): Promise<{ id: number; ownerUserId: number | null } | undefined> {
  const row = await db
    .updateTable('registration_tokens')
    .set({ uses_left: sql`uses_left - 1` })
    .where('token_hash', '=', tokenHash)
    .where('uses_left', '>', 0)
    .where('expires_at', '>', now)
    .returning(['id', 'owner_user_id'])
    .executeTakeFirst();
  return row && { id: Number(row.id), ownerUserId: row.owner_user_id };
}

/** The account's tokens that still register (uses left, unexpired), newest first. */
export async function listActiveRegistrationTokens(
  db: Kysely<Database>,
  ownerUserId: number,
  now: Date,
): Promise<RegistrationTokenRow[]> {
  const rows = await db
    .selectFrom('registration_tokens')
    .select(['id', 'owner_user_id', 'created_by', 'uses_left', 'created_at', 'expires_at'])
    .where('owner_user_id', '=', ownerUserId)
    .where('uses_left', '>', 0)
    .where('expires_at', '>', now)
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toRow);
}

/** Ends an account's token (no uses left); false when it has no such active token. */
export async function endRegistrationToken(
  db: Kysely<Database>,
  ownerUserId: number,
  id: number,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('registration_tokens')
    .set({ uses_left: 0 })
    .where('id', '=', id)
    .where('owner_user_id', '=', ownerUserId)
    .where('uses_left', '>', 0)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
