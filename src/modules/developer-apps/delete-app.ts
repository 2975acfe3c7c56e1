import type { Transaction } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { NotFound } from '../../lib/errors.js';
import { recordAudit } from '../audit/audit.repository.js';
import { lockClientByClientId, updateClientColumns } from '../clients/clients.repository.js';
import { endAccess } from '../oauth/access.service.js';
import { ownerAudit } from './app-changes.js';
import { change, mailOwners } from './app-mail.js';

/**
 * Deletes an application for good, the owner's from the portal or RFC 7592 §2.3's: disabled, its
 * tokens and codes ended, listed nowhere, unknown to authorize and client authentication. The row
 * stays (the audit log and old tokens name it). Audited with the given actor (null: no account, an
 * ownerless client's registration access token) and mailed to the owners there are.
 * @throws NotFound when it is unknown or already deleted.
 */
export async function deleteApp(
  trx: Transaction<Database>,
  ctx: Context,
  clientId: string,
  actor: { userId: number | null; username: string | null; ip?: string | null },
): Promise<void> {
  const client = await lockClientByClientId(trx, clientId);
  if (!client || client.deletedAt !== null) throw new NotFound();
  const now = ctx.clock.now();
  await endAccess(trx, { clientPk: client.id }, now);
  await updateClientColumns(trx, client.id, {
    deletedAt: now,
    disabledAt: client.disabledAt ?? now,
    updatedAt: now,
  });
  await recordAudit(
    trx,
    ownerAudit(
      ctx,
      actor.userId,
      actor.ip,
    )({ action: 'client_deleted', subject: `client:${client.clientId}` }),
  );
  await mailOwners(trx, ctx, change(client, actor.username, { kind: 'deleted' }));
}
