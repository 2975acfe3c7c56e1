import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** Runs `work` in `db` when it already is a transaction, else in a new one. */
export function inTransaction<T>(
  db: Kysely<Database>,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.isTransaction ? work(db as Transaction<Database>) : db.transaction().execute(work);
}
