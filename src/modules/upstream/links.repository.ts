import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { UpstreamKind } from '../../db/schema-upstream.js';

/** An account's link to a provider, as the account page and the data export show it. */
export interface UpstreamLink {
  id: number;
  userId: number;
  providerName: string;
  providerKind: UpstreamKind;
  providerDisplayName: string;
  /** Whether its provider is enabled: a disabled provider's link signs nobody in. */
  providerEnabled: boolean;
  issuer: string;
  subject: string;
  email: string | null;
  label: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** Who a provider's subject belongs to: the only way a later sign-in finds its account. */
export async function findLinkedUser(
  db: Kysely<Database>,
  identity: { providerId: number; issuer: string; subject: string },
): Promise<number | undefined> {
  const row = await db
    .selectFrom('upstream_links')
    .select('user_id')
    .where('provider_id', '=', identity.providerId)
    .where('issuer', '=', identity.issuer)
    .where('subject', '=', identity.subject)
    .executeTakeFirst();
  return row?.user_id;
}

/** Links the subject to the account; false when it is linked already (to this account or another). */
export async function insertLink(
  db: Kysely<Database>,
  link: {
    userId: number;
    providerId: number;
    issuer: string;
    subject: string;
    email: string | null;
    label: string | null;
    at: Date;
  },
): Promise<boolean> {
  const row = await db
    .insertInto('upstream_links')
    .values({
      user_id: link.userId,
      provider_id: link.providerId,
      issuer: link.issuer,
      subject: link.subject,
      email: link.email,
      label: link.label,
      created_at: link.at,
      last_used_at: link.at,
    })
    .onConflict((conflict) => conflict.constraint('upstream_links_subject_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function touchLink(
  db: Kysely<Database>,
  identity: { providerId: number; issuer: string; subject: string },
  at: Date,
): Promise<void> {
  await db
    .updateTable('upstream_links')
    .set({ last_used_at: at })
    .where('provider_id', '=', identity.providerId)
    .where('issuer', '=', identity.issuer)
    .where('subject', '=', identity.subject)
    .execute();
}

/** The account's links, oldest first. */
export async function listLinksOfUser(db: Kysely<Database>, userId: number): Promise<UpstreamLink[]> {
  const rows = await db
    .selectFrom('upstream_links as link')
    .innerJoin('upstream_providers as provider', 'provider.id', 'link.provider_id')
    .select([
      'link.id',
      'link.user_id',
      'provider.name',
      'provider.kind',
      'provider.display_name',
      'provider.enabled',
      'link.issuer',
      'link.subject',
      'link.email',
      'link.label',
      'link.created_at',
      'link.last_used_at',
    ])
    .where('link.user_id', '=', userId)
    .orderBy('link.id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    userId: row.user_id,
    providerName: row.name,
    providerKind: row.kind,
    providerDisplayName: row.display_name,
    providerEnabled: row.enabled,
    issuer: row.issuer,
    subject: row.subject,
    email: row.email,
    label: row.label,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  }));
}

/** Removes one of the account's links; false when it has no such link. */
export async function deleteLink(db: Kysely<Database>, userId: number, linkId: number): Promise<boolean> {
  const result = await db
    .deleteFrom('upstream_links')
    .where('id', '=', linkId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Removes every link of the account (its deletion). */
export async function deleteLinksOfUser(db: Kysely<Database>, userId: number): Promise<number> {
  const result = await db.deleteFrom('upstream_links').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** How many accounts each provider is linked to, by provider id. */
export async function countLinksByProvider(db: Kysely<Database>): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom('upstream_links')
    .select(['provider_id', (eb) => eb.fn.countAll<string>().as('links')])
    .groupBy('provider_id')
    .execute();
  return new Map(rows.map((row) => [row.provider_id, Number(row.links)]));
}
