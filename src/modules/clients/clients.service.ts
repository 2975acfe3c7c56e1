import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { postLogoutRedirectUriProblem, redirectUriProblem } from '../../lib/redirect-uri.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { parseInput } from '../../lib/validation.js';
import { endAccess } from '../oauth/access.service.js';
import type { Client } from './client.js';
import {
  type ClientChanges,
  insertClient,
  listClients as listClientRows,
  lockClientByClientId,
  updateClientColumns,
} from './clients.repository.js';
import {
  type ClientView,
  type CreateClientInput,
  createClientSchema,
  MAX_POST_LOGOUT_REDIRECT_URIS,
  MAX_REDIRECT_URIS,
  type UpdateClientInput,
  updateClientSchema,
} from './clients.schemas.js';

export function presentClient(client: Client): ClientView {
  return {
    client_id: client.clientId,
    name: client.name,
    site_url: client.siteUrl,
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    wallet: client.wallet,
    official_mobile: client.officialMobile,
    require_pushed_authorization_requests: client.requirePar,
    id_token_signed_response_alg: client.idTokenAlg,
    token_endpoint_auth_method: client.isPublic ? 'none' : 'client_secret_basic',
    dpop_bound_access_tokens: client.requireDpop,
    backchannel_logout_uri: client.backchannelLogoutUri,
    logo_uri: client.logoUri,
    disabled: client.disabledAt !== null,
    created_at: client.createdAt.toISOString(),
  };
}

/**
 * Registers a client. The secret is returned this once and stored only as its SHA-256 hash
 *; a public client (`isPublic`) gets none.
 */
export async function createClient(
  db: Kysely<Database>,
  ctx: Context,
  input: CreateClientInput & { isPublic?: false },
): Promise<ClientView & { client_secret: string }>;
export async function createClient(
  db: Kysely<Database>,
  ctx: Context,
  input: CreateClientInput,
): Promise<ClientView & { client_secret?: string }>;
export async function createClient(
  db: Kysely<Database>,
  ctx: Context,
  input: CreateClientInput,
): Promise<ClientView & { client_secret?: string }> {
  const data = parseInput(createClientSchema, input);
  const clientSecret = data.isPublic ? undefined : generateSecret('clientSecret');
  const now = ctx.clock.now();
  const row = await insertClient(db, {
    clientId: generateSecret('clientId'),
    secretHash: clientSecret === undefined ? null : hashSecret(clientSecret),
    isPublic: data.isPublic,
    requireDpop: data.requireDpop,
    name: data.name,
    siteUrl: data.siteUrl,
    redirectUris: [...new Set(data.redirectUris)],
    postLogoutRedirectUris: [...new Set(data.postLogoutRedirectUris)],
    wallet: data.wallet,
    officialMobile: data.officialMobile,
    requirePar: data.requirePar,
    idTokenAlg: data.idTokenAlg,
    backchannelLogoutUri: data.backchannelLogoutUri ?? null,
    logoUri: data.logoUri ?? null,
    at: now,
  });
  const view = presentClient(row);
  const { client_id, ...rest } = view;
  return clientSecret === undefined ? view : { client_id, client_secret: clientSecret, ...rest };
}

export async function listClients(db: Kysely<Database>): Promise<ClientView[]> {
  return (await listClientRows(db)).map(presentClient);
}

/** The post-logout redirect URIs after removals, then additions (none at all is allowed). */
function editPostLogoutRedirectUris(
  current: readonly string[],
  remove: readonly string[],
  add: readonly string[],
): string[] {
  const uris = [...current];
  for (const uri of remove) {
    const index = uris.indexOf(uri);
    if (index === -1)
      throw new InvalidRequest(`post-logout redirect URI "${uri}" is not registered for this client`);
    uris.splice(index, 1);
  }
  for (const uri of add) {
    const problem = postLogoutRedirectUriProblem(uri);
    if (problem) throw new InvalidRequest(problem);
    if (!uris.includes(uri)) uris.push(uri);
  }
  if (uris.length > MAX_POST_LOGOUT_REDIRECT_URIS)
    throw new InvalidRequest(
      `a client may have at most ${MAX_POST_LOGOUT_REDIRECT_URIS} post-logout redirect URIs`,
    );
  return uris;
}

/**
 * Changes a client (`idp clients update`): only the given fields. Disabling ends its access
 * (`endAccess`), so its tokens stay stopped if it is enabled again. 1 to 20 redirect URIs.
 * @throws NotFound for an unknown client_id; InvalidRequest for bad input.
 */
export async function updateClient(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  input: UpdateClientInput,
): Promise<ClientView> {
  const data = parseInput(updateClientSchema, input);
  return db.transaction().execute(async (trx) => {
    const row = await lockClientByClientId(trx, clientId);
    if (!row) throw new NotFound(`no client with client_id ${clientId}`);
    const now = ctx.clock.now();
    const changes: Omit<ClientChanges, 'updatedAt'> = {};
    if (data.name !== undefined) changes.name = data.name;
    if (data.wallet !== undefined) changes.wallet = data.wallet;
    if (data.officialMobile !== undefined) changes.officialMobile = data.officialMobile;
    if (data.requirePar !== undefined) changes.requirePar = data.requirePar;
    // Takes effect with the next id_token: the client cache drops the row on its `c:` announcement.
    if (data.idTokenAlg !== undefined && data.idTokenAlg !== row.idTokenAlg)
      changes.idTokenAlg = data.idTokenAlg;
    if (data.requireDpop !== undefined) changes.requireDpop = data.requireDpop;
    if (data.backchannelLogoutUri !== undefined)
      changes.backchannelLogoutUri = data.backchannelLogoutUri === '' ? null : data.backchannelLogoutUri;
    if (data.logoUri !== undefined) changes.logoUri = data.logoUri === '' ? null : data.logoUri;
    // Disabling again keeps the first disabled_at.
    if (data.disabled !== undefined) changes.disabledAt = data.disabled ? (row.disabledAt ?? now) : null;

    if (data.addRedirectUris.length > 0 || data.removeRedirectUris.length > 0) {
      const uris = [...row.redirectUris];
      for (const uri of data.removeRedirectUris) {
        const index = uris.indexOf(uri);
        if (index === -1) throw new InvalidRequest(`redirect URI "${uri}" is not registered for this client`);
        uris.splice(index, 1);
      }
      for (const uri of data.addRedirectUris) {
        const problem = redirectUriProblem(uri, row.siteUrl);
        if (problem) throw new InvalidRequest(problem);
        if (!uris.includes(uri)) uris.push(uri);
      }
      if (uris.length === 0)
        throw new InvalidRequest(
          'a client needs at least one redirect URI: add the new one before removing the last',
        );
      if (uris.length > MAX_REDIRECT_URIS)
        throw new InvalidRequest(`a client may have at most ${MAX_REDIRECT_URIS} redirect URIs`);
      changes.redirectUris = uris;
    }
    if (data.addPostLogoutRedirectUris.length > 0 || data.removePostLogoutRedirectUris.length > 0) {
      changes.postLogoutRedirectUris = editPostLogoutRedirectUris(
        row.postLogoutRedirectUris,
        data.removePostLogoutRedirectUris,
        data.addPostLogoutRedirectUris,
      );
    }

    // A client disabled (say, its secret leaked) comes back, when enabled again, without the
    // tokens and codes it held: its users' remembered consents let it ask for new ones.
    if (data.disabled === true && row.disabledAt === null) await endAccess(trx, { clientPk: row.id }, now);
    if (Object.keys(changes).length === 0) return presentClient(row);
    return presentClient(await updateClientColumns(trx, row.id, { ...changes, updatedAt: now }));
  });
}

/**
 * Replaces a client's secret. The new one is returned this once and stored only as its SHA-256
 * hash; the old one stops working at once, since only the new hash is kept.
 * @throws NotFound for an unknown client_id; InvalidRequest for a public client (it has no secret).
 */
export async function rotateClientSecret(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
): Promise<ClientView & { client_secret: string }> {
  const clientSecret = generateSecret('clientSecret');
  const row = await db.transaction().execute(async (trx) => {
    const current = await lockClientByClientId(trx, clientId);
    if (!current) throw new NotFound(`no client with client_id ${clientId}`);
    if (current.isPublic) {
      throw new InvalidRequest(
        `client ${clientId} is public (token_endpoint_auth_method none): it has no secret to rotate`,
      );
    }
    return updateClientColumns(trx, current.id, {
      secretHash: hashSecret(clientSecret),
      updatedAt: ctx.clock.now(),
    });
  });
  const { client_id, ...rest } = presentClient(row);
  return { client_id, client_secret: clientSecret, ...rest };
}
