import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database-handle.js';
import { openPostgres } from '../../src/db/postgres.js';
import { PREPARED_MARK, prepared, preparedStatementName } from '../../src/db/prepared.js';
import { createEmptyPostgresDatabase, usingPostgres } from '../helpers/database.js';

/*
 * A statement marked `prepared` is parsed and planned once per connection on PostgreSQL; any
 * other is sent unnamed, as Kysely sends everything (src/db/postgres.ts).
 */
describe('preparedStatementName', () => {
  it('names a marked statement by its text, and no other', () => {
    const name = preparedStatementName(`${PREPARED_MARK}select 1`);
    expect(name).toMatch(/^idp_[0-9a-f]{24}$/);
    expect(preparedStatementName(`${PREPARED_MARK}select 1`)).toBe(name);
    expect(preparedStatementName(`${PREPARED_MARK}select 2`)).not.toBe(name);
    expect(preparedStatementName('select 1')).toBeUndefined();
  });
});

describe.skipIf(!usingPostgres)('statements marked prepared, on PostgreSQL', () => {
  let empty: Awaited<ReturnType<typeof createEmptyPostgresDatabase>>;
  let database: DatabaseHandle;
  beforeAll(async () => {
    empty = await createEmptyPostgresDatabase();
    // One connection: the statements below all run on it.
    database = openPostgres({ url: empty.url, poolMax: 1 });
  });
  afterAll(async () => {
    await database.close();
    await empty.drop();
  });

  const preparedOnConnection = async () =>
    (
      await sql<{
        statement: string;
      }>`select statement from pg_prepared_statements order by statement`.execute(database.db)
    ).rows.map((row) => row.statement);

  it('prepares a marked statement once and answers each call with its own parameters', async () => {
    const marked = (n: number) => sql<{ doubled: number }>`${prepared}select ${n}::int * 2 as doubled`;
    expect((await marked(2).execute(database.db)).rows).toEqual([{ doubled: 4 }]);
    expect((await marked(21).execute(database.db)).rows).toEqual([{ doubled: 42 }]);
    await sql`select ${1}::int as unmarked`.execute(database.db);
    expect(await preparedOnConnection()).toEqual([`${PREPARED_MARK}select $1::int * 2 as doubled`]);
  });

  it('reports a failing marked statement as an error and keeps the connection usable', async () => {
    await expect(sql`${prepared}select 1 / ${0}::int`.execute(database.db)).rejects.toThrow(
      /division by zero/,
    );
    expect((await sql<{ one: number }>`${prepared}select 1 as one`.execute(database.db)).rows).toEqual([
      { one: 1 },
    ]);
  });
});
