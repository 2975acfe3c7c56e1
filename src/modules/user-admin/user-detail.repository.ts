import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { StoredAuditEvent } from '../audit/audit.repository.js';

/**
 * The latest `limit` audit events about a user, newest first (the console's user page): those they
 * did (`user:<id>`), those done to them, and the failed sign-ins that named their username, as the
 * data export selects them; the actor and subject indexes of migrations/0014 serve each branch.
 */
export function listRecentAuditEventsAbout(
  db: Kysely<Database>,
  user: { id: number; username: string },
  limit: number,
): Promise<StoredAuditEvent[]> {
  const self = `user:${user.id}`;
  return db
    .selectFrom('audit_events')
    .select(['id', 'at', 'actor', 'action', 'subject', 'ip', 'details'])
    .where((eb) =>
      eb.or([
        eb('actor', '=', self),
        eb('subject', 'in', [self, `username:${user.username.toLowerCase().slice(0, 64)}`]),
      ]),
    )
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
