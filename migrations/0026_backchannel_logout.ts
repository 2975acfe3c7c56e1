import { type Kysely, sql } from 'kysely';

/**
 * OpenID Connect Back-Channel Logout 1.0. A browser session gets a public `sid`
 * (§2.4: not a credential, so stored as is); codes and the grants made from them record it, so the
 * clients to tell when a session ends are one query. A client registers a `backchannel_logout_uri`.
 * `backchannel_logouts` is the outbox of logout tokens to deliver: it keeps the claims (client,
 * sub, sid), never a signed token, which the worker signs at each attempt.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('backchannel_logout_uri', 'text').execute();

  // Made by the database for every session, those from before this migration included: two v4
  // UUIDs of pg_strong_random (244 random bits) as 43 base64url characters.
  await sql`
    alter table browser_sessions add column sid text not null default rtrim(translate(encode(decode(
      replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64'), '+/', '-_'), '=')
  `.execute(db);
  await db.schema
    .createIndex('browser_sessions_sid_key')
    .unique()
    .on('browser_sessions')
    .column('sid')
    .execute();

  await db.schema.alterTable('authorization_codes').addColumn('sid', 'text').execute();
  await db.schema.alterTable('grants').addColumn('sid', 'text').execute();
  await sql`create index grants_sid_idx on grants (sid) where sid is not null`.execute(db);
  await sql`
    create index authorization_codes_sid_idx on authorization_codes (sid)
    where sid is not null and consumed_at is null`.execute(db);

  await db.schema
    .createTable('backchannel_logouts')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    // The logout token's `sub` and `sid` (Back-Channel Logout 1.0 §2.4).
    .addColumn('user_id', 'bigint', (col) => col.notNull())
    .addColumn('sid', 'text', (col) => col.notNull())
    // Why the session ended (`sign_out`, `password_reset`, `expired`…), for the operator.
    .addColumn('reason', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (col) => col.notNull())
    .addColumn('claim_id', 'text')
    .addColumn('claimed_until', 'timestamptz')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    // The last failure (an HTTP status, a refused address, a timeout), one short line.
    .addColumn('last_error', 'text')
    .addColumn('purge_after', 'timestamptz')
    .execute();
  await sql`
    create index backchannel_logouts_due_idx on backchannel_logouts (next_attempt_at)
    where delivered_at is null and failed_at is null`.execute(db);
  await sql`
    create index backchannel_logouts_purge_after_idx on backchannel_logouts (purge_after)
    where purge_after is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('backchannel_logouts').execute();
  await db.schema.alterTable('grants').dropColumn('sid').execute();
  await db.schema.alterTable('authorization_codes').dropColumn('sid').execute();
  await db.schema.alterTable('browser_sessions').dropColumn('sid').execute();
  await db.schema.alterTable('clients').dropColumn('backchannel_logout_uri').execute();
}
