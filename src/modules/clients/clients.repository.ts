import {
  type Insertable,
  type Kysely,
  type Selectable,
  sql,
  type Transaction,
  type Updateable,
} from 'kysely';
import type { ClientsTable, Database } from '../../db/schema.js';

export type ClientRow = Selectable<ClientsTable>;

export function insertClient(db: Kysely<Database>, client: Insertable<ClientsTable>): Promise<ClientRow> {
  return db.insertInto('clients').values(client).returningAll().executeTakeFirstOrThrow();
}

export function listClients(db: Kysely<Database>): Promise<ClientRow[]> {
  return db.selectFrom('clients').selectAll().orderBy('id').execute();
}

export function findClientByClientId(db: Kysely<Database>, clientId: string): Promise<ClientRow | undefined> {
  return db.selectFrom('clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

/** The oldest client with this name that has this redirect URI among its own (how `idp demo` finds its client). */
export function findClientByNameAndRedirectUri(
  db: Kysely<Database>,
  name: string,
  redirectUri: string,
): Promise<ClientRow | undefined> {
  return db
    .selectFrom('clients')
    .selectAll()
    .where('name', '=', name)
    .where(sql<boolean>`${redirectUri} = any(redirect_uris)`)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/** The client row, locked until the transaction ends (a read-modify-write of its redirect URIs). */
export function lockClientByClientId(
  trx: Transaction<Database>,
  clientId: string,
): Promise<ClientRow | undefined> {
  return trx
    .selectFrom('clients')
    .selectAll()
    .where('client_id', '=', clientId)
    .forUpdate()
    .executeTakeFirst();
}

/** Writes the given columns of one client and returns the row as it is now. */
export function updateClientColumns(
  db: Kysely<Database>,
  id: number,
  changes: Updateable<ClientsTable>,
): Promise<ClientRow> {
  return db.updateTable('clients').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}
