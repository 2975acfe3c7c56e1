import { readdirSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/database.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
});
afterAll(() => database.drop());

describe(`database on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('applies every migration once; applying again is a no-op', async () => {
    expect(await migrateToLatest(database.db)).toEqual(Object.keys(migrations));
    expect(await migrateToLatest(database.db)).toEqual([]);
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = 'public' order by table_name`.execute(
      database.db,
    );
    expect(tables.rows.map((row) => row.table_name)).toEqual(
      expect.arrayContaining(['users', 'clients', 'platform_state', 'incidents']),
    );
  });

  it('lists every migration file in migrations/index.ts, in order', () => {
    const files = readdirSync(path.resolve(import.meta.dirname, '../../migrations'))
      .filter((file) => /^\d{4}_.+\.ts$/.test(file))
      .map((file) => file.replace(/\.ts$/, ''))
      .sort();
    expect(Object.keys(migrations)).toEqual(files);
  });

  it('serializes 50 concurrent read-modify-write transactions exactly', async () => {
    await sql`create table counter (id int primary key, n int not null)`.execute(database.db);
    await sql`insert into counter values (1, 0)`.execute(database.db);
    await Promise.all(
      Array.from({ length: 50 }, () =>
        database.db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ n: number }>`select n from counter where id = 1 for update`.execute(
            trx,
          );
          // Yield between the read and the write so that interleaved transactions would lose updates.
          await new Promise((resolve) => setTimeout(resolve, 1));
          await sql`update counter set n = ${(rows[0] as { n: number }).n + 1} where id = 1`.execute(trx);
        }),
      ),
    );
    const { rows } = await sql<{ n: number }>`select n from counter where id = 1`.execute(database.db);
    expect(rows[0]?.n).toBe(50);
  });

  it('never shows a rolled-back write, even to transactions running at the same time', async () => {
    await sql`create table ledger (note text not null)`.execute(database.db);
    const failing = database.db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into ledger values ('rolled back')`.execute(trx);
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('abort');
      })
      .catch((error: Error) => error.message);
    const committed = database.db.transaction().execute(async (trx) => {
      await sql`insert into ledger values ('committed')`.execute(trx);
      return (await sql<{ note: string }>`select note from ledger order by note`.execute(trx)).rows;
    });
    const [failure, seenInside] = await Promise.all([failing, committed]);
    expect(failure).toBe('abort');
    expect(seenInside.map((row) => row.note)).toEqual(['committed']);
    const after = await sql<{ note: string }>`select note from ledger`.execute(database.db);
    expect(after.rows).toEqual([{ note: 'committed' }]);
  });

  it('returns the same JavaScript types on both drivers', async () => {
    const { rows } = await sql<{
      big: unknown;
      small: unknown;
      at: unknown;
      list: unknown;
      flag: unknown;
    }>`select 9007199254740991::int8 as big, 7::int2 as small, now() as at, array['a','b']::text[] as list, true as flag`.execute(
      database.db,
    );
    expect(rows[0]).toEqual({
      big: 9007199254740991,
      small: 7,
      at: expect.any(Date),
      list: ['a', 'b'],
      flag: true,
    });
  });

  it('reports unique violations with SQLSTATE 23505 on both drivers', async () => {
    await sql`create table uniq (v text unique)`.execute(database.db);
    await sql`insert into uniq values ('x')`.execute(database.db);
    await expect(sql`insert into uniq values ('x')`.execute(database.db)).rejects.toMatchObject({
      code: '23505',
    });
  });
});
