import { createPrivateKey, type KeyObject } from 'node:crypto';
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  importPKCS8,
  type JWK,
} from 'jose';
import type { SigningAlgorithm } from '../../lib/signing-algorithms.js';

// The key pairs behind id_token signatures, one kind per algorithm: RSA 2048 for
// RS256 (RFC 7518 §3.3 asks for 2048 bits or more), P-256 for ES256 (RFC 7518 §3.4) and Ed25519
// for EdDSA (RFC 8037 §3.1; jose's EdDSA is Ed25519 only).

interface JwkMembers<A extends SigningAlgorithm> {
  kid: string;
  alg: A;
  use: 'sig';
}

/** A public RSA key as the JWKS publishes it (RFC 7518 §6.3.1). */
export interface RsaPublicJwk extends JwkMembers<'RS256'> {
  kty: 'RSA';
  n: string;
  e: string;
}

/** A public P-256 key (RFC 7518 §6.2.1). */
export interface EcPublicJwk extends JwkMembers<'ES256'> {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
}

/** A public Ed25519 key (RFC 8037 §2). */
export interface OkpPublicJwk extends JwkMembers<'EdDSA'> {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

/** A public key as the JWKS publishes it (RFC 7517 §4): only public members, never `d`. */
export type PublicJwk = RsaPublicJwk | EcPublicJwk | OkpPublicJwk;

/** A new key pair, ready to store. */
export interface GeneratedKey {
  kid: string;
  algorithm: SigningAlgorithm;
  privateKeyPem: string;
  publicJwk: PublicJwk;
}

/**
 * The public members of `jwk` for `alg`, with our `kid`, `alg` and `use` (RFC 7517 §4.2–4.5):
 * copied member by member, so a private member can never be published.
 */
export function publicJwkFor(kid: string, alg: SigningAlgorithm, jwk: JWK): PublicJwk {
  switch (alg) {
    case 'RS256':
      return { kty: 'RSA', n: jwk.n as string, e: jwk.e as string, kid, alg, use: 'sig' };
    case 'ES256':
      return { kty: 'EC', crv: 'P-256', x: jwk.x as string, y: jwk.y as string, kid, alg, use: 'sig' };
    case 'EdDSA':
      return { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string, kid, alg, use: 'sig' };
  }
}

/**
 * A fresh key pair for `alg`; the kid is its RFC 7638 thumbprint, so it names the key itself.
 * RSA takes tens of milliseconds (more on a busy machine), P-256 and Ed25519 under one.
 */
export async function generateKeyMaterial(alg: SigningAlgorithm): Promise<GeneratedKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'RS256' ? { modulusLength: 2048 } : {}),
  });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  return {
    kid,
    algorithm: alg,
    privateKeyPem: await exportPKCS8(privateKey),
    publicJwk: publicJwkFor(kid, alg, jwk),
  };
}

/** A stored private key, ready for jose (`key`) and for node:crypto (`keyObject`, src/lib/compact-jws.ts). */
export interface PrivateKeys {
  key: CryptoKey;
  keyObject: KeyObject;
}

/**
 * Imported private keys by kid. The kid is the thumbprint of the public key, so one kid is one
 * key pair whichever database it was read from. Importing costs little, but not per request.
 */
const importedKeys = new Map<string, Promise<PrivateKeys>>();
const MAX_IMPORTED_KEYS = 64;

/**
 * The private key of a stored key, imported for `alg` once per process. The KeyObject is parsed
 * from the PEM: the CryptoKey is not extractable, and KeyObject.from() of such a key is
 * deprecated (DEP0204).
 */
export function importPrivateKey(row: {
  kid: string;
  algorithm: SigningAlgorithm;
  privateKeyPem: string;
}): Promise<PrivateKeys> {
  let keys = importedKeys.get(row.kid);
  if (!keys) {
    if (importedKeys.size >= MAX_IMPORTED_KEYS) importedKeys.clear();
    keys = importPKCS8(row.privateKeyPem, row.algorithm).then((key) => ({
      key,
      keyObject: createPrivateKey(row.privateKeyPem),
    }));
    importedKeys.set(row.kid, keys);
    keys.catch(() => importedKeys.delete(row.kid));
  }
  return keys;
}
