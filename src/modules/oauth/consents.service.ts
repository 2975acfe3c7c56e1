import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { findClientByClientId } from '../clients/clients.repository.js';
import { endAccess } from './access.service.js';
import { deleteConsent } from './consents.repository.js';

/**
 * The user revokes an app: the remembered consent goes, and with it every grant of that user for
 * that client (all of its tokens stop at once), its unused codes and its devices. Returns false
 * when the user had not allowed that client.
 */
export async function revokeAppAccess(
  db: Kysely<Database>,
  input: { userId: number; clientId: string; at: Date },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const client = await findClientByClientId(trx, input.clientId);
    if (!client) return false;
    const deleted = await deleteConsent(trx, input.userId, client.id);
    const ended = await endAccess(trx, { userId: input.userId, clientPk: client.id }, input.at);
    return deleted || ended.grantsRevoked > 0 || ended.codesDeleted > 0;
  });
}
