import { type Kysely, sql, type Transaction, type Updateable } from 'kysely';
import type { ClientsTable, Database } from '../../db/schema.js';
import { type Client, toClient } from './client.js';

/** One secret a client authenticates with: its SHA-256 hash and when it stops being accepted (null: never). */
export interface StoredSecret {
  hash: string;
  expiresAt: Date | null;
}

/**
 * A client with the hashes of its secrets that were valid when it was read (none for a public
 * client): only for client authentication and its cache, which check each expiry again at every
 * request.
 */
export type ClientWithSecretHash = Client & { deletedAt: Date | null; secrets: StoredSecret[] };

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
  Partial<Pick<Client, 'isPublic' | 'requireDpop' | 'requirePar' | 'deviceGrant' | 'logoUri'>> & {
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
    | 'deviceGrant'
    | 'requireDpop'
    | 'backchannelLogoutUri'
    | 'logoUri'
    | 'approvedAt'
    | 'walletRequestedAt'
    | 'deletedAt'
  >
> & {
  updatedAt: Date;
};

export async function insertClient(db: Kysely<Database>, client: NewClient): Promise<Client> {
  const row = await db
    .insertInto('clients')
    .values({
      client_id: client.clientId,
      name: client.name,
      site_url: client.siteUrl,
      redirect_uris: client.redirectUris,
      post_logout_redirect_uris: client.postLogoutRedirectUris,
      wallet: client.wallet,
      official_mobile: client.officialMobile,
      require_pushed_authorization_requests: client.requirePar ?? false,
      device_grant: client.deviceGrant ?? false,
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

/**
 * The client with the hashes of its secrets valid at `now`, to authenticate it: one statement,
 * so that a cache miss at the token endpoint costs one round trip.
 */
export async function findClientWithSecretHash(
  db: Kysely<Database>,
  clientId: string,
  now: Date,
): Promise<ClientWithSecretHash | undefined> {
  const row = await db
    .selectFrom('clients')
    .selectAll()
    .select(
      sql<StoredSecretJson[]>`(select coalesce(json_agg(json_build_object(
          'hash', s.secret_hash,
          'expires_ms', floor(extract(epoch from s.expires_at) * 1000)
        ) order by s.id desc), '[]'::json)
        from client_secrets s
        where s.client_pk = clients.id and (s.expires_at is null or s.expires_at > ${now}))`.as('secrets'),
    )
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  if (!row) return undefined;
  const { secrets, ...client } = row;
  return {
    ...toClient(client),
    deletedAt: client.deleted_at,
    secrets: secrets.map((secret) => ({
      hash: secret.hash,
      expiresAt: secret.expires_ms === null ? null : new Date(Number(secret.expires_ms)),
    })),
  };
}

/** A secret as the subselect above returns it (json: the expiry in milliseconds since the epoch). */
interface StoredSecretJson {
  hash: string;
  expires_ms: number | string | null;
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

/**
 * The client with when it was deleted, locked until the transaction ends: a change of its secrets
 * counts and replaces them while no other change of them runs.
 */
export async function lockClientForSecrets(
  trx: Transaction<Database>,
  clientId: string,
): Promise<(Client & { deletedAt: Date | null }) | undefined> {
  const row = await lockClientRow(trx, clientId);
  return row && { ...toClient(row), deletedAt: row.deleted_at };
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
  if (changes.deviceGrant !== undefined) set.device_grant = changes.deviceGrant;
  if (changes.disabledAt !== undefined) set.disabled_at = changes.disabledAt;
  if (changes.requireDpop !== undefined) set.require_dpop = changes.requireDpop;
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
export async function searchClients(
  db: Kysely<Database>,
  query: string,
  limit: number,
  deleted = false,
): Promise<Client[]> {
  let select = db
    .selectFrom('clients')
    .selectAll()
    .where('deleted_at', deleted ? 'is not' : 'is', null);
  if (query !== '') {
    const pattern = likeLiteral(query);
    select = select.where((eb) =>
      eb.or([eb('name', 'ilike', `%${pattern}%`), eb('client_id', 'like', `${pattern}%`)]),
    );
  }
  const rows = await select.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toClient);
}

/** Clients no operator approved yet and not deleted (the console's "awaiting approval"), newest first. */
export async function listUnapprovedClients(db: Kysely<Database>, limit: number): Promise<Client[]> {
  const rows = await db
    .selectFrom('clients')
    .selectAll()
    .where('approved_at', 'is', null)
    .where('deleted_at', 'is', null)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toClient);
}
