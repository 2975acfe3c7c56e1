import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AccessDenied } from '../../lib/errors.js';
import { findUserByUsername } from '../accounts/accounts.repository.js';
import { recordAudit } from '../audit/audit.repository.js';
import { fieldProblem } from '../clients/client-input.js';
import { updateClientColumns } from '../clients/clients.repository.js';
import { lockOwnedApp, ownerAudit } from './app-changes.js';
import { change, mailOwners } from './app-mail.js';
import {
  type AppOwner,
  countOwners,
  deleteOwner,
  insertOwner,
  listOwners as listOwnerRows,
  MAX_APP_OWNERS,
  ownerRole,
} from './owners.repository.js';

export { MAX_APP_OWNERS } from './owners.repository.js';

/** The owner first, then the co-owners in the order they were added. */
export function listOwners(db: Kysely<Database>, clientPk: number): Promise<AppOwner[]> {
  return listOwnerRows(db, clientPk);
}

/**
 * Adds a co-owner by username: they get the same rights as the owner, except deleting the
 * application and removing the owner. Audited and mailed to every owner, the new one included.
 * @throws NotFound for an application not theirs; ClientInputError (`username`) for an unknown or
 * disabled account, an owner already, or MAX_APP_OWNERS reached; RateLimited
 */
export async function addCoOwner(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
  clientId: string,
  username: string,
  options: { ip?: string | null } = {},
): Promise<AppOwner> {
  return inTransaction(db, async (trx) => {
    const { owner: actor, found } = await lockOwnedApp(trx, ctx, userId, clientId);
    const name = username.trim();
    const user = name === '' || name.length > 64 ? undefined : await findUserByUsername(trx, name);
    if (!user || user.disabledAt !== null) throw fieldProblem('username', 'no account has this username');
    const { client } = found;
    if ((await ownerRole(trx, client.id, user.id)) !== undefined)
      throw fieldProblem('username', `${user.username} already owns this application`);
    if ((await countOwners(trx, client.id)) >= MAX_APP_OWNERS)
      throw fieldProblem('username', `an application may have at most ${MAX_APP_OWNERS} owners`);
    const at = ctx.clock.now();
    await insertOwner(trx, { clientPk: client.id, userId: user.id, role: 'co_owner', at });
    await recordAudit(
      trx,
      ownerAudit(
        ctx,
        userId,
        options.ip,
      )({
        action: 'client_owner_added',
        subject: `client:${client.clientId}`,
        details: { user_id: user.id, username: user.username },
      }),
    );
    await mailOwners(
      trx,
      ctx,
      change(client, actor.username, { kind: 'owner_added', username: user.username }),
    );
    return { userId: user.id, username: user.username, role: 'co_owner', addedAt: at };
  });
}

/**
 * Removes a co-owner: the owner removes any co-owner; a co-owner removes only themself (leaving
 * the application). The owner is never removed. Mailed to every owner, the removed one included.
 * @throws NotFound for an application not theirs; AccessDenied for a removal they may not make;
 * ClientInputError (`username`) for an account that is not an owner; RateLimited
 */
export async function removeCoOwner(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
  clientId: string,
  coOwnerUserId: number,
  options: { ip?: string | null } = {},
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const { owner: actor, found } = await lockOwnedApp(trx, ctx, userId, clientId);
    const { client } = found;
    const role = await ownerRole(trx, client.id, coOwnerUserId);
    if (role === undefined) throw fieldProblem('username', 'this account does not own the application');
    if (role === 'owner') throw new AccessDenied('The owner of an application cannot be removed from it.');
    if (found.role !== 'owner' && coOwnerUserId !== userId)
      throw new AccessDenied('A co-owner may remove only themself; the owner removes the others.');
    const removed = (await listOwnerRows(trx, client.id)).find((owner) => owner.userId === coOwnerUserId);
    const username = removed?.username ?? String(coOwnerUserId);
    await recordAudit(
      trx,
      ownerAudit(
        ctx,
        userId,
        options.ip,
      )({
        action: 'client_owner_removed',
        subject: `client:${client.clientId}`,
        details: { user_id: coOwnerUserId, username },
      }),
    );
    // Mailed before the removal, so that the removed account learns of it too.
    await mailOwners(trx, ctx, change(client, actor.username, { kind: 'owner_removed', username }));
    await deleteOwner(trx, client.id, coOwnerUserId);
  });
}

/**
 * Asks the operators for the wallet right (never self-service): they grant it in the console.
 * Asking again while a request waits changes nothing.
 * @throws NotFound for an application not theirs; ClientInputError (`wallet`) when it has the right
 */
export async function requestWallet(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
  clientId: string,
  options: { ip?: string | null } = {},
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const { owner: actor, found } = await lockOwnedApp(trx, ctx, userId, clientId);
    const { client } = found;
    if (client.wallet) throw fieldProblem('wallet', 'the application already has the wallet right');
    if (client.walletRequestedAt !== null) return;
    const now = ctx.clock.now();
    await updateClientColumns(trx, client.id, { walletRequestedAt: now, updatedAt: now });
    await recordAudit(
      trx,
      ownerAudit(
        ctx,
        userId,
        options.ip,
      )({ action: 'client_wallet_requested', subject: `client:${client.clientId}` }),
    );
    await mailOwners(trx, ctx, change(client, actor.username, { kind: 'wallet_requested' }));
  });
}
