import { type KeyObject, sign } from 'node:crypto';
import type { SigningAlgorithm } from './signing-algorithms.js';

/**
 * A JWT in JWS compact serialization (RFC 7515 §7.1), signed synchronously with node:crypto.
 *
 * jose signs through WebCrypto, whose every signature is a job handed to the thread pool and a
 * promise: on this service's machines that cost about 150 µs of CPU per token beyond the signature
 * itself (ES256: 212 µs against 63 µs, RS256: 420–500 µs against 330–360 µs; docs/performance.md
 * "Signing"). The id_token of every code exchange is signed here; jose still verifies every token
 * (test/lib/compact-jws.test.ts checks these with jose's jwtVerify) and signs the rare ones.
 */
export function signCompactJwt(
  header: { alg: SigningAlgorithm; kid: string; typ: 'JWT' },
  claims: Record<string, unknown>,
  key: KeyObject,
): string {
  const input = `${encode(header)}.${encode(claims)}`;
  const data = Buffer.from(input);
  const signature =
    header.alg === 'RS256'
      ? sign('sha256', data, key) // RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3)
      : header.alg === 'ES256'
        ? // R and S as two 32-byte integers, not DER (RFC 7518 §3.4)
          sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' })
        : sign(null, data, key); // Ed25519 hashes by itself (RFC 8037 §3.1)
  return `${input}.${signature.toString('base64url')}`;
}

function encode(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
