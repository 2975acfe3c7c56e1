import type { Deps } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import {
  addClientSecret,
  type ClientSecretView,
  expireClientSecret,
} from '../../modules/clients/client-secret.service.js';
import { lockOwner, ownerAudit, unknownApp } from '../../modules/developer-apps/app-changes.js';
import { type AppChange, mailOwners } from '../../modules/developer-apps/app-mail.js';
import { findOwnedApp } from '../../modules/developer-apps/apps.service.js';

/** Who changes an application's secrets in the portal. */
export interface SecretChanger {
  userId: number;
  ip: string | null;
}

/**
 * A change of an application's secrets as an owner's change: in one transaction, the account is
 * locked and its changes per hour counted (lockOwner), the application checked to be theirs, the
 * secrets service changes the secrets and records the audit event as the account, and every owner
 * is mailed (the outbox), so that a refused or failed change neither counts nor mails anyone.
 */
async function ownerSecretChange<T>(
  deps: Deps,
  by: SecretChanger,
  clientId: string,
  what: AppChange,
  change: (trx: Deps['db'], audit: ReturnType<typeof ownerAudit>) => Promise<T>,
): Promise<T> {
  const { ctx } = deps;
  return inTransaction(deps.db, async (trx) => {
    const owner = await lockOwner(trx, ctx, by.userId);
    const found = await findOwnedApp(trx, by.userId, clientId);
    if (!found) throw unknownApp();
    const result = await change(trx, ownerAudit(ctx, by.userId, by.ip));
    await mailOwners(trx, ctx, {
      clientPk: found.clientPk,
      clientId: found.client.client_id,
      name: found.client.name,
      by: owner.username,
      change: what,
    });
    return result;
  });
}

/** Adds a secret beside the application's others (addClientSecret), as its owner. */
export function addOwnedSecret(
  deps: Deps,
  by: SecretChanger,
  clientId: string,
  expiresAt: Date | null,
): Promise<ClientSecretView & { client_secret: string }> {
  return ownerSecretChange(deps, by, clientId, { kind: 'secret_added' }, (trx, audit) =>
    addClientSecret(trx, deps.ctx, clientId, { expiresAt, audit }),
  );
}

/** Makes one of the application's secrets stop working at `at` (expireClientSecret), as its owner. */
export function expireOwnedSecret(
  deps: Deps,
  by: SecretChanger,
  clientId: string,
  secretId: number,
  at: Date,
): Promise<ClientSecretView> {
  return ownerSecretChange(deps, by, clientId, { kind: 'secret_revoked' }, (trx, audit) =>
    expireClientSecret(trx, deps.ctx, clientId, secretId, { at, audit }),
  );
}
