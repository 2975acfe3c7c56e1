import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { Database, UsersTable } from '../../db/schema.js';

export type UserRow = Selectable<UsersTable>;

export function insertUser(db: Kysely<Database>, user: Insertable<UsersTable>): Promise<UserRow> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
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
