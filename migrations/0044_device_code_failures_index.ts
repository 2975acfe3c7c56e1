import { type Kysely, sql } from 'kysely';

/**
 * The service-wide limit on wrong device codes counts the last minute's `device_code_failed` events
 * at every code typed on /device (src/modules/device/device-approval.service.ts). Through the index
 * on `at` alone that count reads every event of the minute, sign-ins included; this one holds the
 * failures only.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index audit_events_device_code_failed_at_idx on audit_events (at)
    where action = 'device_code_failed'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audit_events_device_code_failed_at_idx`.execute(db);
}
