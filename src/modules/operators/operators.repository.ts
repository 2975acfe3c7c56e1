import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ConsoleRole } from './roles.js';

/** An account with a console role. */
export interface OperatorRecord {
  userId: number;
  username: string;
  role: ConsoleRole;
  grantedAt: Date;
  grantedBy: string;
}

/** The role and username of an enabled account, or undefined: a disabled or deleted account has no role. */
export async function findOperator(
  db: Kysely<Database>,
  userId: number,
): Promise<{ role: ConsoleRole; username: string } | undefined> {
  return db
    .selectFrom('operators')
    .innerJoin('users', 'users.id', 'operators.user_id')
    .select(['operators.role', 'users.username'])
    .where('operators.user_id', '=', userId)
    .where('users.disabled_at', 'is', null)
    .executeTakeFirst();
}

/** Every operator, by username. */
export async function listOperators(db: Kysely<Database>): Promise<OperatorRecord[]> {
  const rows = await db
    .selectFrom('operators')
    .innerJoin('users', 'users.id', 'operators.user_id')
    .select([
      'operators.user_id',
      'users.username',
      'operators.role',
      'operators.granted_at',
      'operators.granted_by',
    ])
    .orderBy('users.username')
    .execute();
  return rows.map((row) => ({
    userId: row.user_id,
    username: row.username,
    role: row.role,
    grantedAt: new Date(row.granted_at),
    grantedBy: row.granted_by,
  }));
}

/** Gives `userId` the role (replacing another); answers the role held before, if any. */
export async function upsertOperator(
  db: Kysely<Database>,
  input: { userId: number; role: ConsoleRole; at: Date; by: string },
): Promise<ConsoleRole | undefined> {
  const before = await db
    .selectFrom('operators')
    .select('role')
    .where('user_id', '=', input.userId)
    .forUpdate()
    .executeTakeFirst();
  await db
    .insertInto('operators')
    .values({ user_id: input.userId, role: input.role, granted_at: input.at, granted_by: input.by })
    .onConflict((oc) =>
      oc.column('user_id').doUpdateSet({ role: input.role, granted_at: input.at, granted_by: input.by }),
    )
    .execute();
  return before?.role;
}

/** Takes the role away; answers the role removed, if there was one. */
export async function deleteOperator(db: Kysely<Database>, userId: number): Promise<ConsoleRole | undefined> {
  const row = await db
    .deleteFrom('operators')
    .where('user_id', '=', userId)
    .returning('role')
    .executeTakeFirst();
  return row?.role;
}
