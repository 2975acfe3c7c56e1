import { type Kysely, sql } from 'kysely';

/**
 * Every change that can end an access token — the token revoked or deleted, its grant revoked,
 * its user changed or disabled, its client changed or disabled — is announced on the
 * `idp_token_events` channel by a trigger, whatever wrote it (the service, the CLI, an operator's
 * SQL). Each instance's in-process token cache listens and drops what changed at once
 * (src/http/token-cache.ts). NOTIFY is delivered at commit, so a rolled-back change announces nothing.
 *
 * Payloads: `t:<token hash>`, `g:<grant id>`, `u:<user id>`, `c:<client id>`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function idp_notify_token_event() returns trigger language plpgsql as $$
    declare
      affected record;
    begin
      if tg_op = 'DELETE' then affected := old; else affected := new; end if;
      if tg_table_name = 'access_tokens' then
        perform pg_notify('idp_token_events', 't:' || affected.token_hash);
      elsif tg_table_name = 'grants' then
        perform pg_notify('idp_token_events', 'g:' || affected.id);
      elsif tg_table_name = 'users' then
        perform pg_notify('idp_token_events', 'u:' || affected.id);
      elsif tg_table_name = 'clients' then
        perform pg_notify('idp_token_events', 'c:' || affected.id);
      end if;
      return null;
    end
    $$`.execute(db);
  for (const table of ['access_tokens', 'grants', 'users', 'clients']) {
    await sql`create trigger ${sql.raw(`${table}_token_events`)} after update or delete on ${sql.table(table)}
      for each row execute function idp_notify_token_event()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['access_tokens', 'grants', 'users', 'clients']) {
    await sql`drop trigger ${sql.raw(`${table}_token_events`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function idp_notify_token_event()`.execute(db);
}
