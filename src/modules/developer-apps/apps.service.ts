import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import type { ClientRegisteredVia } from '../../db/schema-developers.js';
import { inTransaction } from '../../db/transaction.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import type { Client } from '../clients/client.js';
import { ClientInputError } from '../clients/client-input.js';
import { changedSettings } from '../clients/client-view.js';
import { findClientByClientId } from '../clients/clients.repository.js';
import type { ClientView, CreateClientInput, UpdateClientInput } from '../clients/clients.schemas.js';
import { createClient, presentClient, updateClient } from '../clients/clients.service.js';
import {
  AppLimitReached,
  lockOwnedApp,
  lockOwner,
  OwnerOnly,
  ownerAudit,
  RegistrationClosed,
} from './app-changes.js';
import { type AppChange, change, mailOwners } from './app-mail.js';
import { deleteApp } from './delete-app.js';
import {
  countAppsOwnedBy,
  findClientOwnedBy,
  insertOwner,
  listClientsOwnedBy,
  type OwnedClient,
  type OwnerRole,
} from './owners.repository.js';

export { assertChangeAllowed } from './app-changes.js';
export { addCoOwner, listOwners, removeCoOwner, requestWallet } from './co-owners.service.js';

/** An application as its owners see it: its settings, whether an operator approved it, how it was registered. */
export type OwnedAppView = ClientView & {
  approved: boolean;
  wallet_requested: boolean;
  registered_via: ClientRegisteredVia;
};

export interface OwnedApp {
  client: OwnedAppView;
  role: OwnerRole;
  /** The database id, for listOwners and the activity of the application. */
  clientPk: number;
}

export function presentOwnedApp(client: Client): OwnedAppView {
  return {
    ...presentClient(client),
    approved: client.approvedAt !== null,
    wallet_requested: client.walletRequestedAt !== null,
    registered_via: client.registeredVia,
  };
}

function owned({ client, role }: OwnedClient): OwnedApp {
  return { client: presentOwnedApp(client), role, clientPk: client.id };
}

/** Rights that only operators grant: asked for, they are refused by the field. */
function refuseOperatorRights(input: { wallet?: unknown; officialMobile?: unknown }): void {
  const fields: Record<string, string> = {};
  if (input.wallet !== undefined)
    fields.wallet = 'the wallet right is granted by the operators of the service: request it instead';
  if (input.officialMobile !== undefined)
    fields.officialMobile = 'only the operators of the service register its official mobile app';
  if (Object.keys(fields).length > 0) throw new ClientInputError(fields);
}

/**
 * Registers an application owned by `ownerUserId` (null: an operator's RFC 7591 initial access token
 * without an owner), through the same validation as `idp clients create`. It is not approved: under
 * CLIENT_REGISTRATION=approval it signs in only its owners until an operator approves it. Audited
 * and mailed to its owner in the same transaction. Through RFC 7591 (`via: 'registration'`) it gets
 * an RFC 7592 registration access token, returned this once with the secret.
 * @throws RegistrationClosed, AppLimitReached, RateLimited (assertChangeAllowed), ClientInputError
 */
export async function createOwnedApp(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    ownerUserId: number | null;
    input: CreateClientInput;
    via: 'portal' | 'registration';
    ip?: string | null;
  },
): Promise<OwnedAppView & { client_secret?: string; registration_access_token?: string }> {
  if (ctx.config.CLIENT_REGISTRATION === 'closed') throw new RegistrationClosed();
  refuseOperatorRights(input.input);
  const accessToken = input.via === 'registration' ? generateSecret('registrationAccessToken') : undefined;
  return inTransaction(db, async (trx) => {
    const owner = input.ownerUserId === null ? undefined : await lockOwner(trx, ctx, input.ownerUserId);
    if (owner) {
      const limit = ctx.config.DEVELOPER_APPS_PER_USER;
      if ((await countAppsOwnedBy(trx, owner.id)) >= limit) throw new AppLimitReached(limit);
    }
    const created = await createClient(trx, ctx, input.input, {
      audit: ownerAudit(ctx, input.ownerUserId, input.ip),
      registration: { via: input.via, accessTokenHash: accessToken ? hashSecret(accessToken) : null },
    });
    const client = await findClientByClientId(trx, created.client_id);
    if (!client) throw new Error('the client just registered is missing');
    if (owner) {
      await insertOwner(trx, { clientPk: client.id, userId: owner.id, role: 'owner', at: ctx.clock.now() });
      await mailOwners(trx, ctx, change(client, owner.username, { kind: 'created' }));
    }
    const view = presentOwnedApp(client);
    return {
      ...view,
      ...(created.client_secret === undefined ? {} : { client_secret: created.client_secret }),
      ...(accessToken === undefined ? {} : { registration_access_token: accessToken }),
    };
  });
}

/** The applications the account owns or co-owns (not deleted), newest first. */
export async function listOwnedApps(db: Kysely<Database>, userId: number): Promise<OwnedApp[]> {
  return (await listClientsOwnedBy(db, userId)).map(owned);
}

/** One application the account owns or co-owns; undefined for any other (or a deleted) one: a 404. */
export async function findOwnedApp(
  db: Kysely<Database>,
  userId: number,
  clientId: string,
): Promise<OwnedApp | undefined> {
  if (clientId.length > 200) return undefined;
  const found = await findClientOwnedBy(db, userId, clientId);
  return found && owned(found);
}

/**
 * Changes the settings of an application the account owns or co-owns, through the same
 * validation as `idp clients update`. Owners may disable and enable it; the wallet right and the
 * official mobile app stay the operators'. Audited and mailed to every owner.
 * @throws NotFound for an application not theirs; ClientInputError; RateLimited
 */
export async function updateOwnedApp(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
  clientId: string,
  input: UpdateClientInput,
  options: { ip?: string | null } = {},
): Promise<OwnedAppView> {
  refuseOperatorRights(input);
  return inTransaction(db, async (trx) => {
    const { owner, found } = await lockOwnedApp(trx, ctx, userId, clientId);
    const before = presentClient(found.client);
    const after = await updateClient(trx, ctx, clientId, input, {
      audit: ownerAudit(ctx, userId, options.ip),
    });
    const fields = Object.keys(changedSettings(before, after).after);
    if (fields.length > 0) {
      const what: AppChange =
        fields.join() === 'disabled'
          ? { kind: after.disabled ? 'disabled' : 'enabled' }
          : { kind: 'updated', fields };
      await mailOwners(trx, ctx, change(found.client, owner.username, what));
    }
    const client = await findClientByClientId(trx, clientId);
    return presentOwnedApp(client ?? found.client);
  });
}

/**
 * Deletes an application (its owner only, not a co-owner): disabled for good, its tokens and codes
 * ended, listed nowhere, unknown to authorize and client authentication. The row stays (the audit
 * log and old tokens name it). Audited and mailed to every owner.
 * @throws NotFound for an application not theirs; OwnerOnly for a co-owner; RateLimited
 */
export async function deleteOwnedApp(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
  clientId: string,
  options: { ip?: string | null } = {},
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const { owner, found } = await lockOwnedApp(trx, ctx, userId, clientId);
    if (found.role !== 'owner') throw new OwnerOnly('Only the owner of the application may delete it.');
    await deleteApp(trx, ctx, found.client.clientId, { userId, username: owner.username, ip: options.ip });
  });
}
