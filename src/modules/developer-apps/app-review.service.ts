import type { Kysely, Transaction } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import type { ClientRegisteredVia } from '../../db/schema-developers.js';
import { inTransaction } from '../../db/transaction.js';
import { NotFound } from '../../lib/errors.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { ClientAudit } from '../clients/client-input.js';
import {
  findClientByClientId,
  listUnapprovedClients,
  lockClientByClientId,
  updateClientColumns,
} from '../clients/clients.repository.js';
import { change, mailOwners } from './app-mail.js';
import { type OwnedAppView, presentOwnedApp } from './apps.service.js';
import { type AppOwner, listOwners } from './owners.repository.js';

/*
 * What operators decide about applications their owners registered (the console): approval, and
 * the wallet right their owners asked for. Each audited as the operator and mailed to the owners.
 */

async function lockLiveClient(trx: Transaction<Database>, clientId: string) {
  const client = clientId.length > 200 ? undefined : await lockClientByClientId(trx, clientId);
  if (!client || client.deletedAt !== null) throw new NotFound(`no client with client_id ${clientId}`);
  return client;
}

/**
 * Approves an application: from now on it signs in every user (CLIENT_REGISTRATION=approval), and
 * its consent page no longer marks it not reviewed. Approving it again changes nothing.
 * @throws NotFound for an unknown or deleted client
 */
export async function approveClient(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  options: { audit: ClientAudit },
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const client = await lockLiveClient(trx, clientId);
    if (client.approvedAt !== null) return;
    const now = ctx.clock.now();
    await updateClientColumns(trx, client.id, { approvedAt: now, updatedAt: now });
    await recordAudit(
      trx,
      options.audit({
        action: 'client_approved',
        subject: `client:${clientId}`,
        before: { approved: false },
        after: { approved: true },
      }),
    );
    await mailOwners(trx, ctx, change(client, null, { kind: 'approved' }));
  });
}

/**
 * Grants the wallet right its owners asked for (or that an operator decides to give), and clears
 * their request. Granting it again changes nothing.
 * @throws NotFound for an unknown or deleted client
 */
export async function grantWallet(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  options: { audit: ClientAudit },
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const client = await lockLiveClient(trx, clientId);
    if (client.wallet) return;
    const now = ctx.clock.now();
    await updateClientColumns(trx, client.id, { wallet: true, walletRequestedAt: null, updatedAt: now });
    await recordAudit(
      trx,
      options.audit({
        action: 'client_wallet_granted',
        subject: `client:${clientId}`,
        before: { wallet: false },
        after: { wallet: true },
        details: { requested_at: client.walletRequestedAt?.toISOString() ?? null },
      }),
    );
    await mailOwners(trx, ctx, change(client, null, { kind: 'wallet_granted' }));
  });
}

/** What the console shows of an application's registration: how, by whom, its approval and wallet request. */
export interface ClientReview {
  registeredVia: ClientRegisteredVia;
  owners: AppOwner[];
  approvedAt: string | null;
  wallet: boolean;
  walletRequestedAt: string | null;
  deletedAt: string | null;
}

/** The registration of one client as the console shows it; undefined for an unknown client_id. */
export async function findClientReview(
  db: Kysely<Database>,
  clientId: string,
): Promise<ClientReview | undefined> {
  const client = clientId.length > 200 ? undefined : await findClientByClientId(db, clientId);
  if (!client) return undefined;
  return {
    registeredVia: client.registeredVia,
    owners: await listOwners(db, client.id),
    approvedAt: client.approvedAt?.toISOString() ?? null,
    wallet: client.wallet,
    walletRequestedAt: client.walletRequestedAt?.toISOString() ?? null,
    deletedAt: client.deletedAt?.toISOString() ?? null,
  };
}

/** The applications no operator approved yet (not deleted), newest first: the console's "awaiting approval". */
export async function listClientsAwaitingApproval(
  db: Kysely<Database>,
  limit = 100,
): Promise<OwnedAppView[]> {
  return (await listUnapprovedClients(db, limit)).map(presentOwnedApp);
}
