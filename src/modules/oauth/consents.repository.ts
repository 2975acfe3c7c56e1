import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { endAccess } from './oauth.repository.js';

export interface AuthorizedApp {
  clientId: string;
  name: string;
  siteUrl: string;
  scopes: string[];
  grantedAt: Date;
}

export function findConsent(db: Kysely<Database>, userId: number, clientPk: number) {
  return db
    .selectFrom('consents')
    .select(['scopes', 'updated_at'])
    .where('user_id', '=', userId)
    .where('client_pk', '=', clientPk)
    .executeTakeFirst();
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

/** The apps a user allowed, newest first, for the account page. */
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

/**
 * The user revokes an app: the remembered consent goes, every grant of that user for that client is
 * revoked, which stops all of its access and refresh tokens at once, and its unused codes go.
 * Returns false when the user had not allowed that client.
 */
export async function revokeAppAccess(
  db: Kysely<Database>,
  input: { userId: number; clientId: string; at: Date },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const client = await trx
      .selectFrom('clients')
      .select('id')
      .where('client_id', '=', input.clientId)
      .executeTakeFirst();
    if (!client) return false;
    const deleted = await trx
      .deleteFrom('consents')
      .where('user_id', '=', input.userId)
      .where('client_pk', '=', client.id)
      .executeTakeFirst();
    const ended = await endAccess(trx, { userId: input.userId, clientPk: client.id }, input.at);
    return deleted.numDeletedRows > 0n || ended.grantsRevoked > 0 || ended.codesDeleted > 0;
  });
}
