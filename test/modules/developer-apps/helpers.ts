import type { Kysely } from 'kysely';
import type { Context } from '../../../src/context.js';
import type { Database } from '../../../src/db/schema.js';
import { createUser } from '../../../src/modules/accounts/accounts.service.js';

let counter = 0;

/** An account with a confirmed address (the portal's users), or an unconfirmed one. */
export async function makeOwner(
  db: Kysely<Database>,
  ctx: Context,
  options: { emailVerified?: boolean; username?: string } = {},
): Promise<{ id: number; username: string; email: string }> {
  counter += 1;
  const username = options.username ?? `dev_${counter}_${Math.random().toString(36).slice(2, 7)}`;
  const email = `${username}@example.com`;
  const user = await createUser(db, ctx, {
    username,
    password: 'correct horse battery staple',
    email,
    emailVerified: options.emailVerified ?? true,
  });
  return { id: user.id, username: user.username, email };
}

/** An application's settings as the portal's form sends them. */
export const site = (name = 'My Site') => ({
  name,
  siteUrl: 'https://mysite.example',
  redirectUris: ['https://mysite.example/cb'],
});

/** The messages queued to an address, oldest first. */
export function mailTo(db: Kysely<Database>, to: string) {
  return db
    .selectFrom('mail_outbox')
    .select(['kind', 'locale', 'subject', 'text_body', 'html_body', 'user_id'])
    .where('recipient', '=', to)
    .orderBy('id')
    .execute();
}

/** The audit events about one application, oldest first. */
export function auditOf(db: Kysely<Database>, clientId: string) {
  return db
    .selectFrom('audit_events')
    .select(['actor', 'action', 'subject', 'details'])
    .where('subject', '=', `client:${clientId}`)
    .orderBy('id')
    .execute();
}
