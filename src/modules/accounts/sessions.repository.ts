import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

/**
 * Browser sign-in sessions. A session is found by the SHA-256 hash of its cookie value: the value
 * itself is never stored, so a copy of the table signs nobody in.
 */
export interface ActiveSession {
  idHash: string;
  /** The public session id (Back-Channel Logout 1.0 §2.4 `sid`). */
  sid: string;
  userId: number;
  authTime: Date;
  amr: string[];
  expiresAt: Date;
  /** The last re-authentication on this session without a new sign-in, or null (migrations/0031). */
  reauthenticatedAt: Date | null;
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
  /** The `sid` of the session this one continues; a new one when absent. */
  sid?: string;
}

/**
 * Stores a new session; answers its `sid`: the one given (a session continued under a new cookie
 * id), else one the database makes (migrations/0026).
 */
export async function insertSession(db: Kysely<Database>, session: NewSession): Promise<string> {
  const row = await db
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
      ...(session.sid === undefined ? {} : { sid: session.sid }),
    })
    .returning('sid')
    .executeTakeFirstOrThrow();
  return row.sid;
}

/**
 * Deletes the session with this id hash when it is `userId`'s and still valid, answering its `sid`:
 * a new sign-in of the same account in this browser continues that session under a new cookie id.
 */
export async function takeLiveSessionOf(
  db: Kysely<Database>,
  input: { idHash: string; userId: number; now: Date },
): Promise<string | undefined> {
  const row = await db
    .deleteFrom('browser_sessions')
    .where('id_hash', '=', input.idHash)
    .where('user_id', '=', input.userId)
    .where('expires_at', '>', input.now)
    .returning('sid')
    .executeTakeFirst();
  return row?.sid;
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
      'browser_sessions.sid',
      'browser_sessions.user_id',
      'browser_sessions.auth_time',
      'browser_sessions.amr',
      'browser_sessions.expires_at',
      'browser_sessions.reauthenticated_at',
    ])
    .where('browser_sessions.id_hash', '=', idHash)
    .where('browser_sessions.expires_at', '>', now)
    .where('users.disabled_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    idHash: row.id_hash,
    sid: row.sid,
    userId: row.user_id,
    authTime: row.auth_time,
    amr: row.amr,
    expiresAt: row.expires_at,
    reauthenticatedAt: row.reauthenticated_at,
  };
}

/**
 * Records the methods a session now holds (RFC 8176 `amr`) after a second factor was passed or
 * enrolled on it; its `auth_time` and id stay, as no new sign-in happened. False when the session
 * is gone or expired.
 */
export async function setSessionMethods(
  db: Kysely<Database>,
  input: { idHash: string; amr: string[]; now: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('browser_sessions')
    .set({ amr: input.amr })
    .where('id_hash', '=', input.idHash)
    .where('expires_at', '>', input.now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Records a re-authentication on a live session (the password or a code proved again, at `at`). */
export async function setSessionReauthenticated(
  db: Kysely<Database>,
  input: { idHash: string; at: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('browser_sessions')
    .set({ reauthenticated_at: input.at })
    .where('id_hash', '=', input.idHash)
    .where('expires_at', '>', input.at)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Which browser sessions end: one (by its id's hash), every one of a user (`exceptIdHash`: but the
 * one that asked), those of a user that expired, or up to `limit` expired ones of anyone (the
 * housekeeping purge, which skips rows a request holds).
 */
export type SessionSelector =
  | { idHash: string }
  | { userId: number; exceptIdHash?: string }
  | { userId: number; expiredAt: Date }
  | { expiredAt: Date; limit: number };

/** A session just deleted: what a logout token names (Back-Channel Logout 1.0 §2.4). */
export interface EndedSession {
  sid: string;
  userId: number;
}

/** Deletes the selected browser sessions and answers each one's `sid` and user. */
export async function deleteBrowserSessions(
  db: Kysely<Database>,
  where: SessionSelector,
): Promise<EndedSession[]> {
  if ('limit' in where) {
    const result = await sql<{ sid: string; user_id: number }>`
      delete from browser_sessions where id_hash in (
        select id_hash from browser_sessions where expires_at < ${where.expiredAt}
        limit ${where.limit} for update skip locked)
      returning sid, user_id`.execute(db);
    return result.rows.map((row) => ({ sid: row.sid, userId: Number(row.user_id) }));
  }
  let query = db.deleteFrom('browser_sessions');
  if ('idHash' in where) query = query.where('id_hash', '=', where.idHash);
  else {
    query = query.where('user_id', '=', where.userId);
    if ('expiredAt' in where) query = query.where('expires_at', '<=', where.expiredAt);
    else if (where.exceptIdHash !== undefined) query = query.where('id_hash', '!=', where.exceptIdHash);
  }
  const rows = await query.returning(['sid', 'user_id']).execute();
  return rows.map((row) => ({ sid: row.sid, userId: Number(row.user_id) }));
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

/**
 * Gives a live session a new id at a password change: the row keeps its `sid`, user, `auth_time`
 * and `amr`, records the re-authentication, and is found only by `newIdHash` from now on. Answers
 * its `sid`, or undefined when no live session has `idHash` (it ended meanwhile).
 */
export async function renewSessionId(
  db: Kysely<Database>,
  input: { idHash: string; newIdHash: string; now: Date },
): Promise<string | undefined> {
  const row = await db
    .updateTable('browser_sessions')
    // The change that renews the id checked the current password: a fresh proof (sudo mode).
    .set({ id_hash: input.newIdHash, reauthenticated_at: input.now })
    .where('id_hash', '=', input.idHash)
    .where('expires_at', '>', input.now)
    .returning('sid')
    .executeTakeFirst();
  return row?.sid;
}
