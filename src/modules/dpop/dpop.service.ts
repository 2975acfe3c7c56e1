import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { DpopProofError } from '../../lib/errors.js';
import { hashSecret } from '../../lib/secrets.js';
import { isValidDpopNonce } from './dpop-nonce.js';
import { DpopProofRefused, PROOF_MAX_AGE_SECONDS, verifyDpopProof } from './dpop-proof.js';
import { recordDpopProof } from './dpop-proofs.repository.js';

export { currentDpopNonce } from './dpop-nonce.js';

/** A DPoP proof to check, as the request brought it. */
export interface DpopProofInput {
  /** The `DPoP` header(s) of the request. */
  header: string | string[] | undefined;
  method: string;
  /** The request's path (query and fragment are ignored): `htu` must be PUBLIC_URL + path. */
  path: string;
  /** On a resource request: SHA-256 (base64url) of the access token (`ath`). */
  accessTokenHash?: string;
  /** The token endpoint answers 400, a resource 401 (RFC 9449 §5, §7.1). */
  at: 'token' | 'resource';
}

/**
 * Checks a DPoP proof completely (RFC 9449 §4.3): its signature and claims, the server's nonce
 * (required always, §8, §9), and that it was not used before (§11.1: in Redis when REDIS_URL is set,
 * else in the database, so the check holds across instances). Answers the key's thumbprint, and
 * `keepKey`, to call once the request succeeded (src/modules/dpop/dpop-proof.ts).
 * @throws DpopProofError `invalid_dpop_proof`, or `use_dpop_nonce` for a missing or stale nonce.
 * @throws Unavailable when the Redis replay store cannot be reached.
 */
export async function checkDpopProof(
  db: Kysely<Database>,
  ctx: Context,
  input: DpopProofInput,
): Promise<{ jkt: string; keepKey: () => void }> {
  const now = ctx.clock.now();
  const url = `${ctx.config.PUBLIC_URL}${input.path}`;
  let proof: Awaited<ReturnType<typeof verifyDpopProof>>;
  try {
    proof = await verifyDpopProof(input.header, {
      method: input.method,
      url,
      now,
      ...(input.accessTokenHash === undefined ? {} : { accessTokenHash: input.accessTokenHash }),
    });
  } catch (error) {
    if (error instanceof DpopProofRefused)
      throw new DpopProofError('invalid_dpop_proof', error.message, input.at);
    throw error;
  }
  if (proof.nonce === undefined || !isValidDpopNonce(ctx.config.COOKIE_SECRET, proof.nonce, now)) {
    throw new DpopProofError(
      'use_dpop_nonce',
      'Make the DPoP proof again with the nonce of the DPoP-Nonce response header.',
      input.at,
    );
  }
  // RFC 9449 §11.1: a jti is unique per key; remembered as long as the proof could be accepted.
  const proofHash = hashSecret(`${proof.jkt}.${proof.jti}`);
  const expiresAt = new Date((proof.iat + PROOF_MAX_AGE_SECONDS) * 1000);
  const firstUse = ctx.dpopReplayStore
    ? await ctx.dpopReplayStore.firstUse(proofHash, expiresAt.getTime() - now.getTime())
    : await recordDpopProof(db, proofHash, expiresAt);
  if (!firstUse) {
    throw new DpopProofError(
      'invalid_dpop_proof',
      'This DPoP proof was already used: make a new one for each request.',
      input.at,
    );
  }
  return { jkt: proof.jkt, keepKey: proof.keepKey };
}
