import { type Kysely, type Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseAt, type TestDatabase } from '../helpers/database.js';

/*
 * migrations/0039: client_secrets becomes the only place of client secrets. A secret that a
 * release from before it wrote into clients after 0038 had copied them is kept, not lost.
 */
let database: TestDatabase;
let migrator: Migrator;
const db = () => database.db as unknown as Kysely<unknown>;

beforeAll(async () => {
  ({ database, migrator } = await createTestDatabaseAt('0038_developer_portal'));
});
afterAll(() => database.drop());

async function insertClient(clientId: string, columns: { secret: string | null; previous?: string }) {
  const { rows } = await sql<{ id: number }>`insert into clients
      (client_id, name, site_url, redirect_uris, secret_hash, previous_secret_hash, previous_secret_expires_at, is_public)
    values (${clientId}, 'Site', 'https://site.example', ${['https://site.example/cb']}, ${columns.secret},
      ${columns.previous ?? null}, ${columns.previous ? '2099-01-01T00:00:00Z' : null}, ${columns.secret === null})
    returning id`.execute(db());
  return rows[0]?.id as number;
}

const secretsOf = async (clientPk: number) =>
  (
    await sql<{ secret_hash: string; expires_at: Date | null }>`select secret_hash, expires_at
      from client_secrets where client_pk = ${clientPk} order by id`.execute(db())
  ).rows.map((row) => [row.secret_hash, row.expires_at?.toISOString() ?? null]);

describe('migrations/0039_client_secrets_only', () => {
  it('copies the secrets written into clients after 0038, once, and drops the columns; down puts them back', async () => {
    // Written by a release that still kept secrets in clients, after 0038 had run.
    const late = await insertClient('pk_late', { secret: 'h_current', previous: 'h_previous' });
    const copied = await insertClient('pk_copied', { secret: 'h_copied' });
    await sql`insert into client_secrets (client_pk, secret_hash, hint, created_at, expires_at)
      values (${copied}, 'h_copied', 'abcd', now(), null)`.execute(db());
    const publicPk = await insertClient('pk_public', { secret: null });

    expect((await migrator.migrateTo('0039_client_secrets_only')).error).toBeUndefined();
    expect(await secretsOf(late)).toEqual([
      ['h_current', null],
      ['h_previous', '2099-01-01T00:00:00.000Z'],
    ]);
    expect(await secretsOf(copied)).toEqual([['h_copied', null]]);
    expect(await secretsOf(publicPk)).toEqual([]);
    const { rows } = await sql<{ column_name: string }>`select column_name from information_schema.columns
      where table_name = 'clients' and column_name like '%secret%'`.execute(db());
    expect(rows).toEqual([]);

    expect((await migrator.migrateTo('0038_developer_portal')).error).toBeUndefined();
    const back = await sql<Record<string, unknown>>`select client_id, secret_hash, previous_secret_hash
      from clients order by id`.execute(db());
    expect(back.rows).toEqual([
      { client_id: 'pk_late', secret_hash: 'h_current', previous_secret_hash: 'h_previous' },
      { client_id: 'pk_copied', secret_hash: 'h_copied', previous_secret_hash: null },
      { client_id: 'pk_public', secret_hash: null, previous_secret_hash: null },
    ]);
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
  });
});
