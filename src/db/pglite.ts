import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { type DatabaseHandle, type Listen, withIdempotentClose } from './database-handle.js';
import type { Database } from './schema.js';

export interface PgliteOptions {
  /** Starts a new database as a copy of another's `dumpDataDir()` instead of an empty one. */
  from?: Blob;
  /**
   * PostgreSQL's `shared_buffers` (128MB by default). A process that runs a few statements and
   * exits (a CLI command) asks for less: PostgreSQL zeroes the whole pool when it starts, which
   * cost about 0.1 s of a command's 0.6 s (docs/performance.md "Start-up").
   */
  sharedBuffers?: string;
}

/**
 * Embedded PostgreSQL (PGlite), persisted in `dataDir`, or in memory when `dataDir` is undefined.
 *
 * PGlite is one session: kysely-pglite-dialect queues every caller on its single connection, so
 * transactions never interleave. The price: code inside a transaction must use the transaction
 * object only, never `db`, or it waits for itself.
 */
export async function openPglite(dataDir?: string, options: PgliteOptions = {}): Promise<DatabaseHandle> {
  if (dataDir) await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const { from, sharedBuffers } = options;
  const pglite = await PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    ...(from ? { loadDataDir: from } : {}),
    ...(sharedBuffers
      ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`] }
      : {}),
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
