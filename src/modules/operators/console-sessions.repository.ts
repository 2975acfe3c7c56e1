import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** An entry into the console, found by its cookie value's hash. */
export interface ConsoleSessionRecord {
  idHash: string;
  userId: number;
  accountSessionHash: string;
  expiresAt: Date;
  provedAt: Date;
  method: string;
}

export async function insertConsoleSession(
  db: Kysely<Database>,
  input: ConsoleSessionRecord & { createdAt: Date; ip: string | null },
): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({
      id_hash: input.idHash,
      user_id: input.userId,
      account_session_hash: input.accountSessionHash,
      created_at: input.createdAt,
      expires_at: input.expiresAt,
      proved_at: input.provedAt,
      method: input.method,
      ip: input.ip,
    })
    .execute();
}

/** The live console session with this hash, opened on that account session (one that ended ends it too). */
export async function findConsoleSession(
  db: Kysely<Database>,
  input: { idHash: string; accountSessionHash: string; now: Date },
): Promise<ConsoleSessionRecord | undefined> {
  const row = await db
    .selectFrom('console_sessions')
    .select(['id_hash', 'user_id', 'account_session_hash', 'expires_at', 'proved_at', 'method'])
    .where('id_hash', '=', input.idHash)
    .where('account_session_hash', '=', input.accountSessionHash)
    .where('expires_at', '>', input.now)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    idHash: row.id_hash,
    userId: row.user_id,
    accountSessionHash: row.account_session_hash,
    expiresAt: new Date(row.expires_at),
    provedAt: new Date(row.proved_at),
    method: row.method,
  };
}

/** Records a new second-factor proof on a console session (re-authentication). */
export async function setConsoleSessionProved(
  db: Kysely<Database>,
  input: { idHash: string; at: Date; method: string },
): Promise<void> {
  await db
    .updateTable('console_sessions')
    .set({ proved_at: input.at, method: input.method })
    .where('id_hash', '=', input.idHash)
    .execute();
}

/** Ends one console session (leaving) or every one of a user (role revoked); answers how many. */
export async function deleteConsoleSessions(
  db: Kysely<Database>,
  which: { idHash: string } | { userId: number } | { expiredAt: Date },
): Promise<number> {
  let query = db.deleteFrom('console_sessions');
  if ('idHash' in which) query = query.where('id_hash', '=', which.idHash);
  else if ('userId' in which) query = query.where('user_id', '=', which.userId);
  else query = query.where('expires_at', '<=', which.expiredAt);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}
