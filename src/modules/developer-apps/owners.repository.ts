import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { type Client, toClient } from '../clients/client.js';

/** Whether an account is the owner (`owner`) or one of the co-owners (`co_owner`) of an application. */
export type OwnerRole = 'owner' | 'co_owner';

/** An owner of an application, as its owners see the list. */
export interface AppOwner {
  userId: number;
  username: string;
  role: OwnerRole;
  addedAt: Date;
}

/** An owner to write to about a change: the confirmed address only, in the language of their last message. */
export interface OwnerRecipient {
  userId: number;
  username: string;
  email: string | null;
  emailVerified: boolean;
  /** The language of the latest message queued to them; null when none was. */
  locale: string | null;
}

export async function insertOwner(
  db: Kysely<Database>,
  owner: { clientPk: number; userId: number; role: OwnerRole; at: Date },
): Promise<void> {
  await db
    .insertInto('client_owners')
    .values({ client_pk: owner.clientPk, user_id: owner.userId, role: owner.role, added_at: owner.at })
    .execute();
}

/** Removes one owner; false when the account was not one. */
export async function deleteOwner(db: Kysely<Database>, clientPk: number, userId: number): Promise<boolean> {
  const result = await db
    .deleteFrom('client_owners')
    .where('client_pk', '=', clientPk)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Whether the account owns or co-owns the application (authorize lets owners in before approval). */
export async function isOwnerOf(db: Kysely<Database>, clientPk: number, userId: number): Promise<boolean> {
  return (await ownerRole(db, clientPk, userId)) !== undefined;
}

export async function ownerRole(
  db: Kysely<Database>,
  clientPk: number,
  userId: number,
): Promise<OwnerRole | undefined> {
  const row = await db
    .selectFrom('client_owners')
    .select('role')
    .where('client_pk', '=', clientPk)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.role;
}

/** An application has at most this many owners, its owner included. */
export const MAX_APP_OWNERS = 10;

/** The owner first, then co-owners in the order they were added. */
export async function listOwners(db: Kysely<Database>, clientPk: number): Promise<AppOwner[]> {
  const rows = await db
    .selectFrom('client_owners')
    .innerJoin('users', 'users.id', 'client_owners.user_id')
    .select(['client_owners.user_id', 'users.username', 'client_owners.role', 'client_owners.added_at'])
    .where('client_owners.client_pk', '=', clientPk)
    .orderBy('client_owners.role', 'desc')
    .orderBy('client_owners.added_at')
    .orderBy('client_owners.user_id')
    .execute();
  return rows.map((row) => ({
    userId: row.user_id,
    username: row.username,
    role: row.role,
    addedAt: row.added_at,
  }));
}

export async function countOwners(db: Kysely<Database>, clientPk: number): Promise<number> {
  const row = await db
    .selectFrom('client_owners')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('client_pk', '=', clientPk)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The owners to write to about a change of the application (enabled accounts only). */
export async function listOwnerRecipients(db: Kysely<Database>, clientPk: number): Promise<OwnerRecipient[]> {
  const rows = await db
    .selectFrom('client_owners')
    .innerJoin('users', 'users.id', 'client_owners.user_id')
    .select((eb) => [
      'users.id',
      'users.username',
      'users.email',
      'users.email_verified',
      eb
        .selectFrom('mail_outbox')
        .select('mail_outbox.locale')
        .whereRef('mail_outbox.user_id', '=', 'users.id')
        .orderBy('mail_outbox.id', 'desc')
        .limit(1)
        .as('locale'),
    ])
    .where('client_owners.client_pk', '=', clientPk)
    .where('users.disabled_at', 'is', null)
    .orderBy('users.id')
    .execute();
  return rows.map((row) => ({
    userId: row.id,
    username: row.username,
    email: row.email,
    emailVerified: row.email_verified,
    locale: row.locale ?? null,
  }));
}

/** How many applications, not deleted, the account owns as their `owner` (DEVELOPER_APPS_PER_USER). */
export async function countAppsOwnedBy(db: Kysely<Database>, userId: number): Promise<number> {
  const row = await db
    .selectFrom('client_owners')
    .innerJoin('clients', 'clients.id', 'client_owners.client_pk')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('client_owners.user_id', '=', userId)
    .where('client_owners.role', '=', 'owner')
    .where('clients.deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** An application an account owns or co-owns, with its role. */
export interface OwnedClient {
  client: Client;
  role: OwnerRole;
}

/** The applications, not deleted, the account owns or co-owns, newest first. */
export async function listClientsOwnedBy(db: Kysely<Database>, userId: number): Promise<OwnedClient[]> {
  const rows = await db
    .selectFrom('client_owners')
    .innerJoin('clients', 'clients.id', 'client_owners.client_pk')
    .selectAll('clients')
    .select('client_owners.role as owner_role')
    .where('client_owners.user_id', '=', userId)
    .where('clients.deleted_at', 'is', null)
    .orderBy('clients.id', 'desc')
    .execute();
  return rows.map(({ owner_role, ...row }) => ({ client: toClient(row), role: owner_role }));
}

/** One application, not deleted, the account owns or co-owns; undefined otherwise. */
export async function findClientOwnedBy(
  db: Kysely<Database>,
  userId: number,
  clientId: string,
): Promise<OwnedClient | undefined> {
  const row = await db
    .selectFrom('client_owners')
    .innerJoin('clients', 'clients.id', 'client_owners.client_pk')
    .selectAll('clients')
    .select('client_owners.role as owner_role')
    .where('client_owners.user_id', '=', userId)
    .where('clients.client_id', '=', clientId)
    .where('clients.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { owner_role, ...client } = row;
  return { client: toClient(client), role: owner_role };
}
