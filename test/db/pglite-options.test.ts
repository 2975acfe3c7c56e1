import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite.js';
import { migratedTemplate } from '../helpers/database.js';

/*
 * A CLI command opens the embedded database with a small buffer pool (src/cli/run-on-database.ts):
 * PostgreSQL zeroes the whole pool at start, a cost a process that runs a few statements need not pay.
 */
describe('openPglite', () => {
  // A PostgreSQL run makes the template first, in this hook's longer time.
  beforeAll(() => migratedTemplate());

  async function sharedBuffers(options?: Parameters<typeof openPglite>[1]): Promise<string> {
    // The migrated template of test/global-setup.ts: the settings are the same, without an initdb.
    const database = await openPglite(undefined, { from: await migratedTemplate(), ...options });
    try {
      const { rows } = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(database.db);
      return rows[0]?.shared_buffers ?? '';
    } finally {
      await database.close();
    }
  }

  it("keeps PostgreSQL's buffer pool by default and sets the one asked for", async () => {
    expect(await sharedBuffers()).toBe('128MB');
    expect(await sharedBuffers({ sharedBuffers: '16MB' })).toBe('16MB');
  });
});
