import type { Kysely } from 'kysely';
import type { Context } from '../../../context.js';
import type { Database } from '../../../db/schema.js';
import { inTransaction } from '../../../db/transaction.js';
import { NotFound } from '../../../lib/errors.js';
import { recordAudit } from '../../audit/audit.repository.js';
import { lockClientByClientId, updateClientColumns } from '../../clients/clients.repository.js';
import { ownerAudit } from '../../developer-apps/app-changes.js';
import { endAccess } from '../access.service.js';

/**
 * RFC 7592 §2.3 for a client an operator's initial access token registered without an owner:
 * deleted as the portal deletes an owner's (disabled for good, its tokens and codes ended, the row
 * kept for the audit log), with no account to count the change against or mail.
 * @throws NotFound when it is unknown or already deleted.
 */
export async function deleteOwnerlessApp(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  ip: string | null,
): Promise<void> {
  await inTransaction(db, async (trx) => {
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
      ownerAudit(ctx, null, ip)({ action: 'client_deleted', subject: `client:${clientId}` }),
    );
  });
}
