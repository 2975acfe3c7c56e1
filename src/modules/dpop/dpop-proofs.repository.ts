import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/**
 * Records a DPoP proof as used (RFC 9449 §11.1) until `expiresAt`; answers whether this was its
 * first use. One statement, so two instances receiving the same proof at once cannot both accept
 * it: the primary key lets one insert win. Expired rows are purged by the housekeeping.
 */
export async function recordDpopProof(
  db: Kysely<Database>,
  proofHash: string,
  expiresAt: Date,
): Promise<boolean> {
  const row = await db
    .insertInto('dpop_proofs')
    .values({ proof_hash: proofHash, expires_at: expiresAt })
    .onConflict((conflict) => conflict.column('proof_hash').doNothing())
    .returning('proof_hash')
    .executeTakeFirst();
  return row !== undefined;
}
