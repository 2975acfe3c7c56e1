import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { UpstreamKind, UpstreamProvidersTable } from '../../db/schema-upstream.js';

/** A provider as the service uses it; its secrets stay sealed until the moment they are sent. */
export interface UpstreamProvider {
  id: number;
  name: string;
  kind: UpstreamKind;
  displayName: string;
  issuer: string;
  apiUrl: string | null;
  clientId: string;
  clientSecretSealed: string | null;
  appleTeamId: string | null;
  appleKeyId: string | null;
  applePrivateKeySealed: string | null;
  scopes: string;
  enabled: boolean;
  trustAmr: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** The columns a change may set, by their names in UpstreamProvider. */
export type UpstreamProviderFields = Omit<UpstreamProvider, 'id' | 'createdAt' | 'updatedAt'>;

const COLUMNS = {
  name: 'name',
  kind: 'kind',
  displayName: 'display_name',
  issuer: 'issuer',
  apiUrl: 'api_url',
  clientId: 'client_id',
  clientSecretSealed: 'client_secret_sealed',
  appleTeamId: 'apple_team_id',
  appleKeyId: 'apple_key_id',
  applePrivateKeySealed: 'apple_private_key_sealed',
  scopes: 'scopes',
  enabled: 'enabled',
  trustAmr: 'trust_amr',
} as const satisfies Record<keyof UpstreamProviderFields, keyof UpstreamProvidersTable>;

function toProvider(row: Selectable<UpstreamProvidersTable>): UpstreamProvider {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    displayName: row.display_name,
    issuer: row.issuer,
    apiUrl: row.api_url,
    clientId: row.client_id,
    clientSecretSealed: row.client_secret_sealed,
    appleTeamId: row.apple_team_id,
    appleKeyId: row.apple_key_id,
    applePrivateKeySealed: row.apple_private_key_sealed,
    scopes: row.scopes,
    enabled: row.enabled,
    trustAmr: row.trust_amr,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function columnsOf(fields: Partial<UpstreamProviderFields>): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(COLUMNS))
    if (fields[key as keyof UpstreamProviderFields] !== undefined)
      set[column] = fields[key as keyof UpstreamProviderFields];
  return set;
}

export async function insertProvider(
  db: Kysely<Database>,
  fields: UpstreamProviderFields,
  at: Date,
): Promise<UpstreamProvider> {
  const row = await db
    .insertInto('upstream_providers')
    .values({ ...columnsOf(fields), created_at: at, updated_at: at } as never)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toProvider(row);
}

export async function updateProvider(
  db: Kysely<Database>,
  name: string,
  changes: Partial<UpstreamProviderFields>,
  at: Date,
): Promise<UpstreamProvider | undefined> {
  const row = await db
    .updateTable('upstream_providers')
    .set({ ...columnsOf(changes), updated_at: at } as never)
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirst();
  return row && toProvider(row);
}

/** Deletes a provider; its links, trips and pending identities go with it (on delete cascade). */
export async function deleteProvider(
  db: Kysely<Database>,
  name: string,
): Promise<UpstreamProvider | undefined> {
  const row = await db
    .deleteFrom('upstream_providers')
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirst();
  return row && toProvider(row);
}

export async function findProviderByName(
  db: Kysely<Database>,
  name: string,
): Promise<UpstreamProvider | undefined> {
  const row = await db
    .selectFrom('upstream_providers')
    .selectAll()
    .where('name', '=', name)
    .executeTakeFirst();
  return row && toProvider(row);
}

export async function findProviderById(
  db: Kysely<Database>,
  id: number,
): Promise<UpstreamProvider | undefined> {
  const row = await db.selectFrom('upstream_providers').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toProvider(row);
}

/** Every provider, in the order they were added (the order of the sign-in page's buttons). */
export async function listProviders(db: Kysely<Database>): Promise<UpstreamProvider[]> {
  const rows = await db.selectFrom('upstream_providers').selectAll().orderBy('id').execute();
  return rows.map(toProvider);
}
