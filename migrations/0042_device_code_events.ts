import { type Kysely, sql } from 'kysely';

/**
 * `d:<id>` on the change feed (migrations/0003's channel) when a pending device request stops being
 * pending: allowed, denied, or deleted (the app revoked, the client disabled, purged once expired).
 * Every instance answers a waiting device's polls from memory (src/modules/device/device-poll-cache.ts)
 * and forgets the request at this announcement, so the next poll asks the database.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function idp_notify_device_code_event() returns trigger language plpgsql as $$
    begin
      perform pg_notify('idp_token_events', 'd:' || old.id);
      return null;
    end
    $$`.execute(db);
  await sql`create trigger device_codes_events after update of status or delete on device_codes
    for each row when (old.status = 'pending')
    execute function idp_notify_device_code_event()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger device_codes_events on device_codes`.execute(db);
  await sql`drop function idp_notify_device_code_event()`.execute(db);
}
