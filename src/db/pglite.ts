import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { type DatabaseHandle, type Listen, withIdempotentClose } from './database-handle.js';
import type { Database } from './schema.js';

/**
 * Embedded PostgreSQL (PGlite), persisted in `dataDir`, or in memory when `dataDir` is undefined.
 * `from` starts a new database as a copy of another's `dumpDataDir()` instead of an empty one.
 *
 * PGlite is one session: kysely-pglite-dialect queues every caller on its single connection, so
 * transactions never interleave. The price: code inside a transaction must use the transaction
 * object only, never `db`, or it waits for itself.
 */
export async function openPglite(dataDir?: string, from?: Blob): Promise<DatabaseHandle> {
  if (dataDir) await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const pglite = await PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    ...(from ? { loadDataDir: from } : {}),
    extensions: { pg_trgm },
  });
  // One process owns the embedded database, so its notifications never get lost.
  const listen: Listen = async (channel, handlers) => {
    const unsubscribe = await pglite.listen(channel, (payload) => handlers.onMessage(payload));
    handlers.onState(true);
    return unsubscribe;
  };
  return withIdempotentClose('pglite', new Kysely<Database>({ dialect: new PGliteDialect(pglite) }), listen);
}
