import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/**
 * Browser sign-in sessions. A session is found by the SHA-256 hash of its cookie value: the value
 * itself is never stored (CONTRACT.md §3), so a copy of the table signs nobody in.
 */
export interface ActiveSession {
  idHash: string;
  userId: number;
  authTime: Date;
  amr: string[];
  expiresAt: Date;
}

export interface NewSession {
  idHash: string;
  userId: number;
  authTime: Date;
  amr: string[];
  createdAt: Date;
  expiresAt: Date;
  userAgent: string | null;
  ip: string | null;
}

export async function insertSession(db: Kysely<Database>, session: NewSession): Promise<void> {
  await db
    .insertInto('browser_sessions')
    .values({
      id_hash: session.idHash,
      user_id: session.userId,
      auth_time: session.authTime,
      amr: session.amr,
      created_at: session.createdAt,
      expires_at: session.expiresAt,
      user_agent: session.userAgent,
      ip: session.ip,
    })
    .execute();
}

/**
 * The session with this id hash when it is still valid at `now`: not expired, and its user not
 * disabled (a disabled account is signed out everywhere at once, whatever is left in the table).
 */
export async function findActiveSession(
  db: Kysely<Database>,
  idHash: string,
  now: Date,
): Promise<ActiveSession | undefined> {
  const row = await db
    .selectFrom('browser_sessions')
    .innerJoin('users', 'users.id', 'browser_sessions.user_id')
    .select([
      'browser_sessions.id_hash',
      'browser_sessions.user_id',
      'browser_sessions.auth_time',
      'browser_sessions.amr',
      'browser_sessions.expires_at',
    ])
    .where('browser_sessions.id_hash', '=', idHash)
    .where('browser_sessions.expires_at', '>', now)
    .where('users.disabled_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    idHash: row.id_hash,
    userId: row.user_id,
    authTime: row.auth_time,
    amr: row.amr,
    expiresAt: row.expires_at,
  };
}

export async function deleteSession(db: Kysely<Database>, idHash: string): Promise<void> {
  await db.deleteFrom('browser_sessions').where('id_hash', '=', idHash).execute();
}

/** Housekeeping at sign-in: the user's sessions that expired are of no use to anyone. */
export async function deleteExpiredSessionsOfUser(
  db: Kysely<Database>,
  userId: number,
  now: Date,
): Promise<void> {
  await db
    .deleteFrom('browser_sessions')
    .where('user_id', '=', userId)
    .where('expires_at', '<=', now)
    .execute();
}

/** Ends every browser session of a user at once (a disabled account); returns how many there were. */
export async function deleteBrowserSessionsOfUser(db: Kysely<Database>, userId: number): Promise<number> {
  const result = await db.deleteFrom('browser_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Ends every browser session of a user but one (a password change: the browser that made it stays
 * signed in, CONTRACT.md §7 "other sessions end"); returns how many ended.
 */
export async function deleteOtherBrowserSessionsOfUser(
  db: Kysely<Database>,
  userId: number,
  keepIdHash: string,
): Promise<number> {
  const result = await db
    .deleteFrom('browser_sessions')
    .where('user_id', '=', userId)
    .where('id_hash', '!=', keepIdHash)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A browser session as the data export shows it: never its id or the id's hash. */
export interface SessionRecord {
  authTime: Date;
  createdAt: Date;
  expiresAt: Date;
  userAgent: string | null;
  ip: string | null;
}

/** Every stored browser session of a user, oldest first (the data export). */
export function listSessionsOfUser(db: Kysely<Database>, userId: number): Promise<SessionRecord[]> {
  return db
    .selectFrom('browser_sessions')
    .select([
      'auth_time as authTime',
      'created_at as createdAt',
      'expires_at as expiresAt',
      'user_agent as userAgent',
      'ip',
    ])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
}
