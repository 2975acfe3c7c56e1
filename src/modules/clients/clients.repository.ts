import {
  type Insertable,
  type Kysely,
  type Selectable,
  sql,
  type Transaction,
  type Updateable,
} from 'kysely';
import type { ClientsTable, Database } from '../../db/schema.js';
import { type Client, toClient } from './client.js';

/** A client with its secret's hash: only for client authentication and its cache. */
export type ClientWithSecretHash = Client & { secretHash: string };

function withSecretHash(row: Selectable<ClientsTable>): ClientWithSecretHash {
  return { ...toClient(row), secretHash: row.secret_hash };
}

export async function insertClient(db: Kysely<Database>, client: Insertable<ClientsTable>): Promise<Client> {
  return toClient(await db.insertInto('clients').values(client).returningAll().executeTakeFirstOrThrow());
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
  const row = await trx
    .selectFrom('clients')
    .selectAll()
    .where('client_id', '=', clientId)
    .forUpdate()
    .executeTakeFirst();
  return row && toClient(row);
}

/** Writes the given columns of one client and returns it as it is now. */
export async function updateClientColumns(
  db: Kysely<Database>,
  id: number,
  changes: Updateable<ClientsTable>,
): Promise<Client> {
  return toClient(
    await db
      .updateTable('clients')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
}

/** Serializes `idp demo` runs until the transaction ends (a fixed advisory lock key). */
export async function lockDemoSetup(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('idp demo'))`.execute(trx);
}
