import { type Kysely, type Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseAt, type TestDatabase, usingPostgres } from '../helpers/database.js';

/*
 * migrations/0045: clients.redirect_uris may be empty for a client with the device grant. Its
 * down puts back 0001's 1-to-20 check, which a client without a redirect URI stops.
 */
let database: TestDatabase;
let migrator: Migrator;
const db = () => database.db as unknown as Kysely<unknown>;

beforeAll(async () => {
  ({ database, migrator } = await createTestDatabaseAt('0044_device_code_failures_index'));
});
afterAll(() => database.drop());

const checks = async () =>
  (
    await sql<{ name: string; definition: string }>`select conname as name,
        pg_get_constraintdef(oid) as definition
      from pg_constraint where conrelid = 'clients'::regclass and conname like 'clients_redirect_uris%'`.execute(
      db(),
    )
  ).rows;

const insert = (clientId: string, uris: string[], deviceGrant: boolean) =>
  sql`insert into clients (client_id, name, site_url, redirect_uris, device_grant)
    values (${clientId}, 'TV', 'https://tv.example', ${uris}, ${deviceGrant})`.execute(db());

describe(`migrations/0045_device_clients_without_redirect_uris on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('lets a device client have no redirect URI; down puts back one to twenty', async () => {
    expect((await checks()).map((check) => check.name)).toEqual(['clients_redirect_uris_check']);
    await expect(insert('pk_before', [], true)).rejects.toMatchObject({ code: '23514' });

    expect((await migrator.migrateTo('0045_device_clients_without_redirect_uris')).error).toBeUndefined();
    expect((await checks()).map((check) => check.name)).toEqual(['clients_redirect_uris_count']);
    await insert('pk_tv', [], true);
    await expect(insert('pk_site', [], false)).rejects.toMatchObject({ code: '23514' });
    const many = Array.from({ length: 21 }, (_, i) => `https://tv.example/${i}`);
    await expect(insert('pk_many', many, true)).rejects.toMatchObject({ code: '23514' });
    await insert('pk_twenty', many.slice(1), false);

    // A client without a redirect URI stops the way back, until it has one.
    const down = await migrator.migrateTo('0044_device_code_failures_index');
    expect(down.error).toBeDefined();
    expect((await checks()).map((check) => check.name)).toEqual(['clients_redirect_uris_count']);
    await sql`update clients set redirect_uris = ${['https://tv.example/cb']} where client_id = 'pk_tv'`.execute(
      db(),
    );
    expect((await migrator.migrateTo('0044_device_code_failures_index')).error).toBeUndefined();
    expect(await checks()).toEqual([
      {
        name: 'clients_redirect_uris_check',
        definition: 'CHECK (((cardinality(redirect_uris) >= 1) AND (cardinality(redirect_uris) <= 20)))',
      },
    ]);
    await expect(insert('pk_after', [], true)).rejects.toMatchObject({ code: '23514' });
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
  });
});
