import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ClientSecretsTable } from '../../db/schema-developers.js';

/** One secret of a client as stored: its hash is never read back here, only written. */
export interface ClientSecretRecord {
  id: number;
  clientPk: number;
  hint: string;
  createdAt: Date;
  /** Null: valid until it is expired or replaced. */
  expiresAt: Date | null;
}

function toRecord(row: Omit<Selectable<ClientSecretsTable>, 'secret_hash'>): ClientSecretRecord {
  return {
    id: row.id,
    clientPk: row.client_pk,
    hint: row.hint,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

const COLUMNS = ['id', 'client_pk', 'hint', 'created_at', 'expires_at'] as const;

export async function insertClientSecret(
  db: Kysely<Database>,
  secret: { clientPk: number; secretHash: string; hint: string; at: Date; expiresAt: Date | null },
): Promise<ClientSecretRecord> {
  const row = await db
    .insertInto('client_secrets')
    .values({
      client_pk: secret.clientPk,
      secret_hash: secret.secretHash,
      hint: secret.hint,
      created_at: secret.at,
      expires_at: secret.expiresAt,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return toRecord(row);
}

/** The client's secrets still valid at `now` (no expiry, or a later one), newest first. */
export async function listValidSecrets(
  db: Kysely<Database>,
  clientPk: number,
  now: Date,
): Promise<ClientSecretRecord[]> {
  const rows = await db
    .selectFrom('client_secrets')
    .select(COLUMNS)
    .where('client_pk', '=', clientPk)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toRecord);
}

/** Sets when the client's secrets with these ids stop being accepted. */
export async function setSecretsExpiry(
  db: Kysely<Database>,
  clientPk: number,
  ids: readonly number[],
  expiresAt: Date,
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('client_secrets')
    .set({ expires_at: expiresAt })
    .where('client_pk', '=', clientPk)
    .where('id', 'in', [...ids])
    .execute();
}
