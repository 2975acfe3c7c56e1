import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export interface AuthorizedApp {
  clientId: string;
  name: string;
  siteUrl: string;
  scopes: string[];
  grantedAt: Date;
}

export async function findConsent(
  db: Kysely<Database>,
  userId: number,
  clientPk: number,
): Promise<{ scopes: string[]; updatedAt: Date } | undefined> {
  const row = await db
    .selectFrom('consents')
    .select(['scopes', 'updated_at'])
    .where('user_id', '=', userId)
    .where('client_pk', '=', clientPk)
    .executeTakeFirst();
  return row && { scopes: row.scopes, updatedAt: row.updated_at };
}

/** Remembers what the user allowed, merged with what they allowed before. */
export async function saveConsent(
  db: Kysely<Database>,
  consent: { userId: number; clientPk: number; scopes: string[]; at: Date },
): Promise<void> {
  await db
    .insertInto('consents')
    .values({
      user_id: consent.userId,
      client_pk: consent.clientPk,
      scopes: consent.scopes,
      created_at: consent.at,
      updated_at: consent.at,
    })
    .onConflict((oc) =>
      oc.columns(['user_id', 'client_pk']).doUpdateSet((eb) => ({
        scopes: eb.ref('excluded.scopes'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/** Forgets the consent of a user for a client; answers whether there was one. */
export async function deleteConsent(
  db: Kysely<Database>,
  userId: number,
  clientPk: number,
): Promise<boolean> {
  const deleted = await db
    .deleteFrom('consents')
    .where('user_id', '=', userId)
    .where('client_pk', '=', clientPk)
    .executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

/** The apps a user allowed, newest first, for the account page (a read-only join to clients). */
export async function listAuthorizedApps(db: Kysely<Database>, userId: number): Promise<AuthorizedApp[]> {
  const rows = await db
    .selectFrom('consents')
    .innerJoin('clients', 'clients.id', 'consents.client_pk')
    .select([
      'clients.client_id',
      'clients.name',
      'clients.site_url',
      'consents.scopes',
      'consents.updated_at',
    ])
    .where('consents.user_id', '=', userId)
    .orderBy('consents.updated_at', 'desc')
    .execute();
  return rows.map((row) => ({
    clientId: row.client_id,
    name: row.name,
    siteUrl: row.site_url,
    scopes: row.scopes,
    grantedAt: row.updated_at,
  }));
}
