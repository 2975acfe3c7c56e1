import { type Kysely, type Selectable, sql, type Transaction, type Updateable } from 'kysely';
import type { ClientsTable, Database } from '../../db/schema.js';
import { type Client, toClient } from './client.js';

/**
 * A client with its secret's hash (null for a public client), and the hash of the secret it had
 * before its last rotation with the moment that one stops being accepted (both null without an
 * overlap): only for client authentication and its cache.
 */
export type ClientWithSecretHash = Client & {
  secretHash: string | null;
  previousSecretHash: string | null;
  previousSecretExpiresAt: Date | null;
};

function withSecretHash(row: Selectable<ClientsTable>): ClientWithSecretHash {
  return {
    ...toClient(row),
    secretHash: row.secret_hash,
    previousSecretHash: row.previous_secret_hash,
    previousSecretExpiresAt: row.previous_secret_expires_at,
  };
}

/** What a client is registered with; only the secret's hash is stored. */
export type NewClient = Pick<
  Client,
  | 'clientId'
  | 'name'
  | 'siteUrl'
  | 'redirectUris'
  | 'postLogoutRedirectUris'
  | 'wallet'
  | 'officialMobile'
  | 'idTokenAlg'
  | 'backchannelLogoutUri'
> &
  Partial<Pick<Client, 'isPublic' | 'requireDpop' | 'requirePar' | 'logoUri'>> & {
    /** Null for a public client. */
    secretHash: string | null;
    at: Date;
    /** Registered by its owners (unreviewed until an operator approves it); absent: by an operator, approved at once. */
    registration?: ClientRegistration;
  };

/** How a client registered by its owners came to be; RFC 7592's access token hash for `registration`. */
export interface ClientRegistration {
  via: 'portal' | 'registration';
  accessTokenHash?: string | null;
}

/** What may change of a client; `updatedAt` always does. */
export type ClientChanges = Partial<
  Pick<
    Client,
    | 'name'
    | 'siteUrl'
    | 'redirectUris'
    | 'postLogoutRedirectUris'
    | 'wallet'
    | 'officialMobile'
    | 'disabledAt'
    | 'idTokenAlg'
    | 'requirePar'
    | 'requireDpop'
    | 'backchannelLogoutUri'
    | 'logoUri'
    | 'approvedAt'
    | 'walletRequestedAt'
    | 'deletedAt'
  >
> & {
  secretHash?: string;
  /** The secret replaced by `secretHash` and until when it still counts, or null to keep none. */
  previousSecret?: { hash: string; expiresAt: Date } | null;
  updatedAt: Date;
};

export async function insertClient(db: Kysely<Database>, client: NewClient): Promise<Client> {
  const row = await db
    .insertInto('clients')
    .values({
      client_id: client.clientId,
      secret_hash: client.secretHash,
      name: client.name,
      site_url: client.siteUrl,
      redirect_uris: client.redirectUris,
      post_logout_redirect_uris: client.postLogoutRedirectUris,
      wallet: client.wallet,
      official_mobile: client.officialMobile,
      require_pushed_authorization_requests: client.requirePar ?? false,
      id_token_signed_response_alg: client.idTokenAlg,
      is_public: client.isPublic ?? false,
      require_dpop: client.requireDpop ?? false,
      backchannel_logout_uri: client.backchannelLogoutUri,
      logo_uri: client.logoUri ?? null,
      created_at: client.at,
      updated_at: client.at,
      approved_at: client.registration ? null : client.at,
      registered_via: client.registration?.via ?? 'operator',
      registration_access_token_hash: client.registration?.accessTokenHash ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toClient(row);
}

export async function listClients(db: Kysely<Database>): Promise<Client[]> {
  return (await db.selectFrom('clients').selectAll().orderBy('id').execute()).map(toClient);
}

/** Whether any client is registered (first-run hint). */
export async function hasAnyClient(db: Kysely<Database>): Promise<boolean> {
  return (await db.selectFrom('clients').select('id').limit(1).executeTakeFirst()) !== undefined;
}

export async function findClientById(db: Kysely<Database>, id: number): Promise<Client | undefined> {
  const row = await db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toClient(row);
}

export async function findClientByClientId(
  db: Kysely<Database>,
  clientId: string,
): Promise<Client | undefined> {
  const row = await findClientRow(db, clientId);
  return row && toClient(row);
}

/** The client with its secret's hash, to authenticate it. */
export async function findClientWithSecretHash(
  db: Kysely<Database>,
  clientId: string,
): Promise<ClientWithSecretHash | undefined> {
  const row = await findClientRow(db, clientId);
  return row && withSecretHash(row);
}

function findClientRow(db: Kysely<Database>, clientId: string) {
  return db.selectFrom('clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

/** The oldest client with this name that has this redirect URI among its own (how `idp demo` finds its client). */
export async function findClientByNameAndRedirectUri(
  db: Kysely<Database>,
  name: string,
  redirectUri: string,
): Promise<Client | undefined> {
  const row = await db
    .selectFrom('clients')
    .selectAll()
    .where('name', '=', name)
    .where(sql<boolean>`${redirectUri} = any(redirect_uris)`)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row && toClient(row);
}

/** The client, locked until the transaction ends (a read-modify-write of its redirect URIs). */
export async function lockClientByClientId(
  trx: Transaction<Database>,
  clientId: string,
): Promise<Client | undefined> {
  const row = await lockClientRow(trx, clientId);
  return row && toClient(row);
}

/** The client with its secret's hash, locked until the transaction ends (a rotation keeps the old hash). */
export async function lockClientWithSecretHash(
  trx: Transaction<Database>,
  clientId: string,
): Promise<ClientWithSecretHash | undefined> {
  const row = await lockClientRow(trx, clientId);
  return row && withSecretHash(row);
}

function lockClientRow(trx: Transaction<Database>, clientId: string) {
  return trx
    .selectFrom('clients')
    .selectAll()
    .where('client_id', '=', clientId)
    .forUpdate()
    .executeTakeFirst();
}

/** Writes the given changes of one client and returns it as it is now. */
export async function updateClientColumns(
  db: Kysely<Database>,
  id: number,
  changes: ClientChanges,
): Promise<Client> {
  const set: Updateable<ClientsTable> = { updated_at: changes.updatedAt };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.siteUrl !== undefined) set.site_url = changes.siteUrl;
  if (changes.redirectUris !== undefined) set.redirect_uris = changes.redirectUris;
  if (changes.postLogoutRedirectUris !== undefined)
    set.post_logout_redirect_uris = changes.postLogoutRedirectUris;
  if (changes.wallet !== undefined) set.wallet = changes.wallet;
  if (changes.officialMobile !== undefined) set.official_mobile = changes.officialMobile;
  if (changes.requirePar !== undefined) set.require_pushed_authorization_requests = changes.requirePar;
  if (changes.disabledAt !== undefined) set.disabled_at = changes.disabledAt;
  if (changes.requireDpop !== undefined) set.require_dpop = changes.requireDpop;
  if (changes.secretHash !== undefined) set.secret_hash = changes.secretHash;
  if (changes.previousSecret !== undefined) {
    set.previous_secret_hash = changes.previousSecret?.hash ?? null;
    set.previous_secret_expires_at = changes.previousSecret?.expiresAt ?? null;
  }
  if (changes.idTokenAlg !== undefined) set.id_token_signed_response_alg = changes.idTokenAlg;
  if (changes.backchannelLogoutUri !== undefined) set.backchannel_logout_uri = changes.backchannelLogoutUri;
  if (changes.logoUri !== undefined) set.logo_uri = changes.logoUri;
  if (changes.approvedAt !== undefined) set.approved_at = changes.approvedAt;
  if (changes.walletRequestedAt !== undefined) set.wallet_requested_at = changes.walletRequestedAt;
  if (changes.deletedAt !== undefined) set.deleted_at = changes.deletedAt;
  const row = await db
    .updateTable('clients')
    .set(set)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toClient(row);
}

/** Serializes `idp demo` runs until the transaction ends (a fixed advisory lock key). */
export async function lockDemoSetup(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('idp demo'))`.execute(trx);
}

/** The clients with these database ids (the data export names the clients of ledger entries). */
export async function findClientsByIds(db: Kysely<Database>, ids: readonly number[]): Promise<Client[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('clients')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
  return rows.map(toClient);
}

/** `text` as a LIKE pattern that matches it literally (`\` is PostgreSQL's default escape). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/**
 * Clients whose name contains `query` (any case) or whose client_id starts with it, newest first;
 * every client when `query` is empty. At most `limit` rows.
 */
export async function searchClients(db: Kysely<Database>, query: string, limit: number): Promise<Client[]> {
  let select = db.selectFrom('clients').selectAll();
  if (query !== '') {
    const pattern = likeLiteral(query);
    select = select.where((eb) =>
      eb.or([eb('name', 'ilike', `%${pattern}%`), eb('client_id', 'like', `${pattern}%`)]),
    );
  }
  const rows = await select.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toClient);
}
