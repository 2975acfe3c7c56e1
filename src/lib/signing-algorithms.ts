import { createHash } from 'node:crypto';

/**
 * The JWS algorithms id_tokens are signed with: RS256 (RSA 2048, the default OIDC
 * Core §15.1 requires every provider to offer), ES256 (P-256, RFC 7518 §3.4) and EdDSA (Ed25519,
 * RFC 8037 §3.1). A client picks one as its `id_token_signed_response_alg` (OIDC Registration §2).
 */
export const SIGNING_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;

export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

/** What a client gets unless it asks for another (OIDC Registration §2: the default is RS256). */
export const DEFAULT_SIGNING_ALGORITHM: SigningAlgorithm = 'RS256';

/** Whether `value` names one of the algorithms we sign with, spelled exactly. */
export function isSigningAlgorithm(value: string): value is SigningAlgorithm {
  return (SIGNING_ALGORITHMS as readonly string[]).includes(value);
}

/** The algorithms as a sentence lists them: `RS256, ES256 or EdDSA`. */
export const SIGNING_ALGORITHMS_TEXT = 'RS256, ES256 or EdDSA';

/**
 * The hash of `at_hash` / `c_hash` for an algorithm (OIDC Core §3.1.3.6: the hash of the JWS
 * `alg`). EdDSA names no hash; for Ed25519 client libraries check SHA-512 (oauth4webapi 3, under
 * openid-client 6), the hash inside Ed25519 itself (RFC 8032 §5.1).
 */
export function tokenHashAlgorithm(alg: SigningAlgorithm): 'sha256' | 'sha512' {
  return alg === 'EdDSA' ? 'sha512' : 'sha256';
}

/**
 * An OIDC `at_hash` (OIDC Core §3.1.3.6): base64url of the left half of the hash, chosen by the
 * id_token's `alg`, of the ASCII token.
 */
export function leftHalfHash(value: string, alg: SigningAlgorithm): string {
  const digest = createHash(tokenHashAlgorithm(alg)).update(value, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}
