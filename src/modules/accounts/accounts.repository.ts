import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { Database, UsersTable } from '../../db/schema.js';
import { usernameSkeleton } from '../../lib/username-skeleton.js';

export type UserRow = Selectable<UsersTable>;

/** Inserts a user with the skeleton of its username; a name like an existing one fails the unique index. */
export function insertUser(
  db: Kysely<Database>,
  user: Omit<Insertable<UsersTable>, 'username_skeleton'>,
): Promise<UserRow> {
  return db
    .insertInto('users')
    .values({ ...user, username_skeleton: usernameSkeleton(user.username) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Case-insensitive lookup, served by the unique index on lower(username). */
export function findUserByUsername(db: Kysely<Database>, username: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
    .executeTakeFirst();
}

/**
 * The user row by username (case-insensitive), locked until the transaction ends, so a
 * read-modify-write of the profile cannot interleave with another one. Run inside a transaction.
 */
export function lockUserByUsername(
  trx: Transaction<Database>,
  username: string,
): Promise<UserRow | undefined> {
  return trx
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
    .forUpdate()
    .executeTakeFirst();
}

/** Writes the given columns of one user and returns the row as it is now. */
export function updateUserColumns(
  db: Kysely<Database>,
  userId: number,
  changes: Updateable<UsersTable>,
): Promise<UserRow> {
  return db
    .updateTable('users')
    .set(changes)
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Ends every browser session of a user at once; returns how many there were. */
export async function deleteBrowserSessionsOfUser(db: Kysely<Database>, userId: number): Promise<number> {
  const result = await db.deleteFrom('browser_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export function findUserById(db: Kysely<Database>, userId: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
}

/**
 * Takes a password-check slot for the user and source (see migrations/0012) in one statement:
 * counts this attempt in the current window, or starts a new window when the last one began
 * `windowMs` ago or more. Returns the attempts in the window, this one included. Concurrent
 * attempts queue on the row, so each gets its own number and none slips past a limit.
 */
export async function countSignInAttempt(
  db: Kysely<Database>,
  attempt: { userId: number; source: string },
  now: Date,
  windowMs: number,
): Promise<number> {
  const windowStart = new Date(now.getTime() - windowMs);
  const row = await db
    .insertInto('sign_in_attempts')
    .values({ user_id: attempt.userId, source: attempt.source, attempts: 1, window_started_at: now })
    .onConflict((conflict) =>
      conflict.columns(['user_id', 'source']).doUpdateSet((eb) => ({
        attempts: eb
          .case()
          .when('sign_in_attempts.window_started_at', '<=', windowStart)
          .then(1)
          .else(eb('sign_in_attempts.attempts', '+', 1))
          .end(),
        window_started_at: eb
          .case()
          .when('sign_in_attempts.window_started_at', '<=', windowStart)
          .then(now)
          .else(eb.ref('sign_in_attempts.window_started_at'))
          .end(),
      })),
    )
    .returning('attempts')
    .executeTakeFirstOrThrow();
  return row.attempts;
}

/** After a successful sign-in: the count of that source (or, without one, every count of the user) starts again. */
export async function clearSignInAttempts(
  db: Kysely<Database>,
  userId: number,
  source?: string,
): Promise<void> {
  let query = db.deleteFrom('sign_in_attempts').where('user_id', '=', userId);
  if (source !== undefined) query = query.where('source', '=', source);
  await query.execute();
}
