/**
 * DPoP proofs (RFC 9449 §4.2) for the load generator: signed synchronously with node:crypto, since
 * autocannon asks for each request's headers synchronously, and a fresh `jti` each, as a client
 * must send (the service accepts a proof once).
 */
import { createHash, generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import { currentDpopNonce } from '../src/modules/dpop/dpop-nonce.js';

export interface DpopSigner {
  /** RFC 7638 thumbprint of the public key: the `jkt` bound tokens carry. */
  jkt: string;
  /** A proof for one request with `token` (its `ath`). */
  proof(method: string, url: string, token: string): string;
}

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/**
 * An ES256 key pair and its proofs. The server nonce (RFC 9449 §8) is computed from the service's
 * COOKIE_SECRET, as the service computes it, and renewed every second: it changes every 5 minutes.
 */
export function dpopSigner(cookieSecret: string): DpopSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' }) as { crv: string; kty: string; x: string; y: string };
  // RFC 7638 §3.2: the required members in lexicographic order, no white space.
  const jkt = b64url(
    createHash('sha256')
      .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
      .digest(),
  );
  const header = b64url(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk }));
  let nonce = currentDpopNonce(cookieSecret, new Date());
  let nonceAt = Date.now();
  return {
    jkt,
    proof(method, url, token) {
      if (Date.now() - nonceAt > 1000) {
        nonce = currentDpopNonce(cookieSecret, new Date());
        nonceAt = Date.now();
      }
      const payload = b64url(
        JSON.stringify({
          htm: method,
          htu: url,
          iat: Math.floor(Date.now() / 1000),
          jti: randomUUID(),
          nonce,
          ath: b64url(createHash('sha256').update(token).digest()),
        }),
      );
      const input = `${header}.${payload}`;
      const signature = sign('sha256', Buffer.from(input), {
        key: privateKey as KeyObject,
        dsaEncoding: 'ieee-p1363',
      });
      return `${input}.${b64url(signature)}`;
    },
  };
}
