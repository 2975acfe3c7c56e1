import type { Insertable, Kysely, Selectable } from 'kysely';
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
