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

/** A consent as the data export shows it: the app, what it may do, since when. */
export interface ConsentRecord {
  clientId: string;
  name: string;
  siteUrl: string;
  scopes: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** Every consent of a user with its client's name and site, oldest first (the data export). */
export function listConsentsOfUser(db: Kysely<Database>, userId: number): Promise<ConsentRecord[]> {
  return db
    .selectFrom('consents')
    .innerJoin('clients', 'clients.id', 'consents.client_pk')
    .select([
      'clients.client_id as clientId',
      'clients.name',
      'clients.site_url as siteUrl',
      'consents.scopes',
      'consents.created_at as createdAt',
      'consents.updated_at as updatedAt',
    ])
    .where('consents.user_id', '=', userId)
    .orderBy('consents.created_at')
    .execute();
}

/** Forgets every consent of a user (account deletion); answers how many there were. */
export async function deleteConsentsOfUser(db: Kysely<Database>, userId: number): Promise<number> {
  const deleted = await db.deleteFrom('consents').where('user_id', '=', userId).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
