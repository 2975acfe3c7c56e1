import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { NotFound } from '../../lib/errors.js';
import { postLogoutRedirectUriProblem, redirectUriProblem } from '../../lib/redirect-uri.js';
import { generateSecret } from '../../lib/secrets.js';
import { recordAudit } from '../audit/audit.repository.js';
import { endAccess } from '../oauth/access.service.js';
import { type ClientAudit, fieldProblem, parseClientInput } from './client-input.js';
import { latestExpiry, storeNewSecret } from './client-secret.service.js';
import { changedSettings, presentClient, registeredSettings } from './client-view.js';
import {
  type ClientChanges,
  type ClientRegistration,
  findClientWithSecretHash,
  insertClient,
  listClients as listClientRows,
  lockClientByClientId,
  searchClients as searchClientRows,
  updateClientColumns,
} from './clients.repository.js';
import {
  type ClientView,
  type CreateClientInput,
  createClientSchema,
  MAX_POST_LOGOUT_REDIRECT_URIS,
  redirectUriCountProblem,
  type UpdateClientInput,
  updateClientSchema,
} from './clients.schemas.js';

export { ClientInputError } from './client-input.js';
export { rotateClientSecret } from './client-secret.service.js';
export { presentClient } from './client-view.js';

/** What a change may record besides itself: the audit event, in the same transaction. */
export interface ClientChangeOptions {
  audit?: ClientAudit;
}

/** A registration by the client's owners (the portal, RFC 7591): not approved until an operator does. */
export interface ClientCreateOptions extends ClientChangeOptions {
  registration?: ClientRegistration;
}

/**
 * Registers a client. The secret is returned this once and stored only as its SHA-256 hash (its
 * first row of `client_secrets`, without expiry); a public client (`isPublic`) gets none.
 * @throws ClientInputError (an InvalidRequest) naming each refused field.
 */
export async function createClient(
  db: Kysely<Database>,
  ctx: Context,
  input: CreateClientInput & { isPublic?: false },
  options?: ClientCreateOptions,
): Promise<ClientView & { client_secret: string }>;
export async function createClient(
  db: Kysely<Database>,
  ctx: Context,
  input: CreateClientInput,
  options?: ClientCreateOptions,
): Promise<ClientView & { client_secret?: string }>;
export async function createClient(
  db: Kysely<Database>,
  ctx: Context,
  input: CreateClientInput,
  options: ClientCreateOptions = {},
): Promise<ClientView & { client_secret?: string }> {
  const data = parseClientInput(createClientSchema, input);
  const now = ctx.clock.now();
  const { view, clientSecret } = await inTransaction(db, async (trx) => {
    const row = await insertClient(trx, {
      clientId: generateSecret('clientId'),
      isPublic: data.isPublic,
      requireDpop: data.requireDpop,
      name: data.name,
      siteUrl: data.siteUrl,
      redirectUris: [...new Set(data.redirectUris)],
      postLogoutRedirectUris: [...new Set(data.postLogoutRedirectUris)],
      wallet: data.wallet,
      officialMobile: data.officialMobile,
      requirePar: data.requirePar,
      deviceGrant: data.deviceGrant,
      idTokenAlg: data.idTokenAlg,
      backchannelLogoutUri: data.backchannelLogoutUri ?? null,
      logoUri: data.logoUri ?? null,
      at: now,
      ...(options.registration ? { registration: options.registration } : {}),
    });
    const secret = data.isPublic ? undefined : await storeNewSecret(trx, row.id, now, null);
    const created = presentClient(row);
    if (options.audit) {
      await recordAudit(
        trx,
        options.audit({
          action: 'client_created',
          subject: `client:${created.client_id}`,
          after: registeredSettings(created),
        }),
      );
    }
    return { view: created, clientSecret: secret?.clientSecret };
  });
  const { client_id, ...rest } = view;
  return clientSecret === undefined ? view : { client_id, client_secret: clientSecret, ...rest };
}

export async function listClients(db: Kysely<Database>): Promise<ClientView[]> {
  return (await listClientRows(db)).map(presentClient);
}

/** Clients whose name contains `query` or whose client_id starts with it (the console's list), newest first. */
export async function searchClients(
  db: Kysely<Database>,
  query: string,
  options: { limit?: number; deleted?: boolean } = {},
): Promise<(ClientView & { deleted: boolean })[]> {
  const rows = await searchClientRows(db, query.trim().slice(0, 200), options.limit ?? 100, options.deleted);
  return rows.map((client) => ({ ...presentClient(client), deleted: client.deletedAt !== null }));
}

/**
 * One client as the console shows it, with until when its replaced secrets are still accepted:
 * the latest expiry among its valid secrets other than the newest (null when none runs out);
 * undefined for an unknown client_id.
 */
export async function findClientDetails(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
): Promise<(ClientView & { previous_secret_expires_at: string | null }) | undefined> {
  if (clientId.length > 200) return undefined;
  const client = await findClientWithSecretHash(db, clientId, ctx.clock.now());
  if (!client) return undefined;
  // Newest first: the rest are the ones a rotation replaced, or that its owners added before.
  const until = latestExpiry(client.secrets.slice(1));
  return { ...presentClient(client), previous_secret_expires_at: until?.toISOString() ?? null };
}

/** A list after removals, then additions; `problem` checks each added entry; `field` names the list. */
function editList(
  current: readonly string[],
  edit: { remove: readonly string[]; add: readonly string[] },
  field: string,
  what: string,
  problem: (uri: string) => string | null,
): string[] {
  const uris = [...current];
  for (const uri of edit.remove) {
    const index = uris.indexOf(uri);
    if (index === -1) throw fieldProblem(field, `${what} "${uri}" is not registered for this client`);
    uris.splice(index, 1);
  }
  for (const uri of edit.add) {
    const refused = problem(uri);
    if (refused) throw fieldProblem(field, refused);
    if (!uris.includes(uri)) uris.push(uri);
  }
  return uris;
}

/**
 * Changes a client (`idp clients update`, the console): only the given fields. Disabling ends
 * its access (`endAccess`), so its tokens stay stopped if it is enabled again. At most 20 redirect
 * URIs, at least one unless it keeps or gets the device grant; a new site URL must suit every
 * redirect URI the client keeps.
 * @throws NotFound for an unknown client_id; ClientInputError (an InvalidRequest) for bad input.
 */
export async function updateClient(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  input: UpdateClientInput,
  options: ClientChangeOptions = {},
): Promise<ClientView> {
  const data = parseClientInput(updateClientSchema, input);
  return inTransaction(db, async (trx) => {
    const row = await lockClientByClientId(trx, clientId);
    if (!row) throw new NotFound(`no client with client_id ${clientId}`);
    const now = ctx.clock.now();
    const changes: Omit<ClientChanges, 'updatedAt'> = {};
    if (data.name !== undefined) changes.name = data.name;
    if (data.siteUrl !== undefined) changes.siteUrl = data.siteUrl;
    if (data.wallet !== undefined) changes.wallet = data.wallet;
    // The right granted (`idp clients update --wallet true`) answers its owners' request.
    if (data.wallet === true && row.walletRequestedAt !== null) changes.walletRequestedAt = null;
    if (data.officialMobile !== undefined) changes.officialMobile = data.officialMobile;
    if (data.requirePar !== undefined) changes.requirePar = data.requirePar;
    if (data.deviceGrant !== undefined) changes.deviceGrant = data.deviceGrant;
    // Takes effect with the next id_token: the client cache drops the row on its `c:` announcement.
    if (data.idTokenAlg !== undefined && data.idTokenAlg !== row.idTokenAlg)
      changes.idTokenAlg = data.idTokenAlg;
    if (data.requireDpop !== undefined) changes.requireDpop = data.requireDpop;
    if (data.backchannelLogoutUri !== undefined)
      changes.backchannelLogoutUri = data.backchannelLogoutUri === '' ? null : data.backchannelLogoutUri;
    if (data.logoUri !== undefined) changes.logoUri = data.logoUri === '' ? null : data.logoUri;
    // Disabling again keeps the first disabled_at.
    if (data.disabled !== undefined) changes.disabledAt = data.disabled ? (row.disabledAt ?? now) : null;

    const siteUrl = changes.siteUrl ?? row.siteUrl;
    if (data.addRedirectUris.length > 0 || data.removeRedirectUris.length > 0 || changes.siteUrl) {
      const uris = editList(
        row.redirectUris,
        { remove: data.removeRedirectUris, add: data.addRedirectUris },
        'redirectUris',
        'redirect URI',
        (uri) => redirectUriProblem(uri, siteUrl),
      );
      const count = redirectUriCountProblem(uris.length, changes.deviceGrant ?? row.deviceGrant);
      if (count) throw fieldProblem('redirectUris', count);
      // A kept custom-scheme URI may not suit a new https site URL (docs/api.md, native applications).
      for (const uri of uris) {
        const problem = changes.siteUrl ? redirectUriProblem(uri, siteUrl) : null;
        if (problem) throw fieldProblem('siteUrl', problem);
      }
      if (data.addRedirectUris.length > 0 || data.removeRedirectUris.length > 0) changes.redirectUris = uris;
    }
    // Without the grant the client needs a redirect URI (the branch above checked changed URIs).
    const kept = changes.redirectUris ?? row.redirectUris;
    if (changes.deviceGrant === false && redirectUriCountProblem(kept.length, false))
      throw fieldProblem(
        'deviceGrant',
        'a client without redirect URIs keeps the device grant: add a redirect URI to take the grant away',
      );
    if (data.addPostLogoutRedirectUris.length > 0 || data.removePostLogoutRedirectUris.length > 0) {
      const uris = editList(
        row.postLogoutRedirectUris,
        { remove: data.removePostLogoutRedirectUris, add: data.addPostLogoutRedirectUris },
        'postLogoutRedirectUris',
        'post-logout redirect URI',
        postLogoutRedirectUriProblem,
      );
      if (uris.length > MAX_POST_LOGOUT_REDIRECT_URIS)
        throw fieldProblem(
          'postLogoutRedirectUris',
          `a client may have at most ${MAX_POST_LOGOUT_REDIRECT_URIS} post-logout redirect URIs`,
        );
      changes.postLogoutRedirectUris = uris;
    }

    // A client disabled (say, its secret leaked) comes back, when enabled again, without the
    // tokens and codes it held: its users' remembered consents let it ask for new ones.
    if (data.disabled === true && row.disabledAt === null) await endAccess(trx, { clientPk: row.id }, now);
    const before = presentClient(row);
    if (Object.keys(changes).length === 0) return before;
    const after = presentClient(await updateClientColumns(trx, row.id, { ...changes, updatedAt: now }));
    const diff = changedSettings(before, after);
    if (options.audit && Object.keys(diff.after).length > 0) {
      const onlyDisabled = Object.keys(diff.after).join() === 'disabled';
      const action = !onlyDisabled ? 'client_updated' : after.disabled ? 'client_disabled' : 'client_enabled';
      await recordAudit(trx, options.audit({ action, subject: `client:${clientId}`, ...diff }));
    }
    return after;
  });
}
