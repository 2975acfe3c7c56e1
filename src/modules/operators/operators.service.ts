import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { NotFound } from '../../lib/errors.js';
import { findUserByUsername } from '../accounts/accounts.repository.js';
import { recordAudit } from '../audit/audit.repository.js';
import { deleteConsoleSessions } from './console-sessions.repository.js';
import {
  deleteOperator,
  listOperators,
  type OperatorRecord,
  upsertOperator,
} from './operators.repository.js';
import type { ConsoleRole } from './roles.js';

export type { OperatorRecord } from './operators.repository.js';

async function enabledUser(db: Kysely<Database>, username: string) {
  const user = await findUserByUsername(db, username);
  if (!user || user.disabledAt) throw new NotFound(`No enabled user "${username}".`);
  return user;
}

/**
 * Gives an account a console role (`idp admins grant`), replacing the one it had. A changed role
 * ends the account's console sessions: the next page asks for the second factor again, under the
 * new role.
 */
export async function grantRole(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string; role: ConsoleRole; by: string },
): Promise<{ username: string; role: ConsoleRole; previous: ConsoleRole | null }> {
  const user = await enabledUser(db, input.username);
  const at = ctx.clock.now();
  const previous = await db.transaction().execute(async (trx) => {
    const before = await upsertOperator(trx, { userId: user.id, role: input.role, at, by: input.by });
    if (before !== input.role) await deleteConsoleSessions(trx, { userId: user.id });
    await recordAudit(trx, {
      at,
      actor: input.by,
      action: 'operator_granted',
      subject: `user:${user.id}`,
      details: { username: user.username, before: before ?? null, after: input.role },
    });
    return before;
  });
  return { username: user.username, role: input.role, previous: previous ?? null };
}

/** Takes an account's console role away (`idp admins revoke`); its console sessions end with it. */
export async function revokeRole(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string; by: string },
): Promise<{ username: string; previous: ConsoleRole }> {
  const user = await findUserByUsername(db, input.username);
  if (!user) throw new NotFound(`No user "${input.username}".`);
  const at = ctx.clock.now();
  const previous = await db.transaction().execute(async (trx) => {
    const removed = await deleteOperator(trx, user.id);
    if (!removed) return undefined;
    await deleteConsoleSessions(trx, { userId: user.id });
    await recordAudit(trx, {
      at,
      actor: input.by,
      action: 'operator_revoked',
      subject: `user:${user.id}`,
      details: { username: user.username, before: removed },
    });
    return removed;
  });
  if (!previous) throw new NotFound(`"${user.username}" has no console role.`);
  return { username: user.username, previous };
}

/** Every operator with their role (`idp admins list`). */
export function operators(db: Kysely<Database>): Promise<OperatorRecord[]> {
  return listOperators(db);
}
