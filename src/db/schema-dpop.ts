import type { Timestamp } from './column-types.js';

/* The table of DPoP (RFC 9449, migrations/0024); part of schema.ts's Database. */

/** A DPoP proof already accepted (RFC 9449 §11.1): SHA-256 of its key thumbprint and `jti`. */
export interface DpopProofsTable {
  proof_hash: string;
  expires_at: Timestamp;
}
