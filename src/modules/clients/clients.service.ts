import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { parseInput } from '../../lib/validation.js';
import { type ClientRow, insertClient, listClients as listClientRows } from './clients.repository.js';
import { type ClientView, type CreateClientInput, createClientSchema } from './clients.schemas.js';

export function presentClient(row: ClientRow): ClientView {
  return {
    client_id: row.client_id,
    name: row.name,
    site_url: row.site_url,
    redirect_uris: row.redirect_uris,
    wallet: row.wallet,
    official_mobile: row.official_mobile,
    disabled: row.disabled_at !== null,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * Registers a client. The secret is returned this once and stored only as its SHA-256 hash
 * (CONTRACT.md §3).
 */
export async function createClient(
  db: Kysely<Database>,
  clock: Clock,
  input: CreateClientInput,
): Promise<ClientView & { client_secret: string }> {
  const data = parseInput(createClientSchema, input);
  const clientSecret = generateSecret('clientSecret');
  const now = clock.now();
  const row = await insertClient(db, {
    client_id: generateSecret('clientId'),
    secret_hash: hashSecret(clientSecret),
    name: data.name,
    site_url: data.siteUrl,
    redirect_uris: [...new Set(data.redirectUris)],
    wallet: data.wallet,
    official_mobile: data.officialMobile,
    created_at: now,
    updated_at: now,
  });
  const view = presentClient(row);
  const { client_id, ...rest } = view;
  return { client_id, client_secret: clientSecret, ...rest };
}

export async function listClients(db: Kysely<Database>): Promise<ClientView[]> {
  return (await listClientRows(db)).map(presentClient);
}
