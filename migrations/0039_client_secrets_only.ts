import { type Kysely, sql } from 'kysely';

/**
 * `client_secrets` becomes the only place of client secrets (several valid at once, each until
 * its expiry): the columns of the single secret and of a rotation's previous one leave `clients`.
 * A secret written there after migrations/0038 copied them (by a release from before this one) is
 * copied first, so that no client loses the secret it authenticates with.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`insert into client_secrets (client_pk, secret_hash, hint, created_at, expires_at)
    select c.id, c.secret_hash, '', c.updated_at, null from clients c
    where c.secret_hash is not null
      and not exists (select 1 from client_secrets s where s.client_pk = c.id and s.secret_hash = c.secret_hash)`.execute(
    db,
  );
  await sql`insert into client_secrets (client_pk, secret_hash, hint, created_at, expires_at)
    select c.id, c.previous_secret_hash, '', c.updated_at, c.previous_secret_expires_at from clients c
    where c.previous_secret_hash is not null
      and not exists (
        select 1 from client_secrets s where s.client_pk = c.id and s.secret_hash = c.previous_secret_hash
      )`.execute(db);
  await sql`alter table clients
    drop constraint clients_previous_secret_pair,
    drop column previous_secret_expires_at,
    drop column previous_secret_hash,
    drop column secret_hash`.execute(db);
}

/**
 * Back to one secret and a previous one: the newest valid secret without an expiry (else the
 * newest valid one), and the valid one beside it that expires last.
 */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients
    add column secret_hash text,
    add column previous_secret_hash text,
    add column previous_secret_expires_at timestamptz,
    add constraint clients_previous_secret_pair check (
      (previous_secret_hash is null) = (previous_secret_expires_at is null)
    )`.execute(db);
  await sql`update clients c set secret_hash = (
      select s.secret_hash from client_secrets s
      where s.client_pk = c.id and (s.expires_at is null or s.expires_at > now())
      order by s.expires_at is null desc, s.id desc limit 1)
    where not c.is_public`.execute(db);
  await sql`update clients c set (previous_secret_hash, previous_secret_expires_at) = (
      select s.secret_hash, s.expires_at from client_secrets s
      where s.client_pk = c.id and s.expires_at > now() and s.secret_hash <> c.secret_hash
      order by s.expires_at desc limit 1)
    where c.secret_hash is not null`.execute(db);
}
