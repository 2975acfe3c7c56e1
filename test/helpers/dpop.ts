// DPoP proofs (RFC 9449 §4.2) as a client makes them, with jose.
import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { hashSecret } from '../../src/lib/secrets.js';
import { currentDpopNonce } from '../../src/modules/dpop/dpop-nonce.js';
import type { TestApp } from './app.js';

/** What a proof is made for: the app's PUBLIC_URL, COOKIE_SECRET (its nonces) and clock. */
export type ProofTarget = Pick<TestApp, 'config' | 'clock'>;

export interface DpopKey {
  alg: 'ES256' | 'EdDSA';
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** RFC 7638 thumbprint, as the server stores it (`cnf.jkt`). */
  jkt: string;
}

/** A fresh key pair for proofs. */
export async function dpopKey(alg: 'ES256' | 'EdDSA' = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { alg, privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, 'sha256') };
}

export interface ProofOptions {
  htm?: string;
  /** Absolute URL; default the token endpoint under the app's PUBLIC_URL. */
  htu?: string;
  /** Default: the server's current nonce; `null` leaves it out. */
  nonce?: string | null;
  /** Adds `ath` for this access token. */
  accessToken?: string;
  /** Overrides `ath` itself. */
  ath?: string;
  /** Seconds since the epoch; default the app's clock. */
  iat?: number;
  jti?: string | null;
  typ?: string;
  /** Header members to add or replace (a private jwk, another alg). */
  header?: Record<string, unknown>;
}

/** The server's nonce now (what its DPoP-Nonce header says). */
export function serverNonce(t: ProofTarget): string {
  return currentDpopNonce(t.config.COOKIE_SECRET, t.clock.now());
}

/** A proof for a request to `t`'s app, signed by `key`. */
export async function dpopProof(t: ProofTarget, key: DpopKey, options: ProofOptions = {}): Promise<string> {
  const nonce = options.nonce === undefined ? serverNonce(t) : options.nonce;
  const claims: Record<string, unknown> = {
    htm: options.htm ?? 'POST',
    htu: options.htu ?? `${t.config.PUBLIC_URL}/api/v1/oauth/token`,
    iat: options.iat ?? Math.floor(t.clock.now().getTime() / 1000),
  };
  const jti = options.jti === undefined ? randomUUID() : options.jti;
  if (jti !== null) claims.jti = jti;
  if (nonce !== null) claims.nonce = nonce;
  if (options.accessToken !== undefined) claims.ath = hashSecret(options.accessToken);
  if (options.ath !== undefined) claims.ath = options.ath;
  return new SignJWT(claims)
    .setProtectedHeader({
      alg: key.alg,
      typ: options.typ ?? 'dpop+jwt',
      jwk: key.publicJwk,
      ...options.header,
    } as { alg: string })
    .sign(key.privateKey);
}

/** A resource request's proof: `htm`/`htu` of the route, `ath` of the token. */
export function resourceProof(
  t: ProofTarget,
  key: DpopKey,
  accessToken: string,
  options: ProofOptions & { method?: string; path?: string } = {},
): Promise<string> {
  const { method = 'GET', path = '/api/v1/oauth/userinfo', ...rest } = options;
  return dpopProof(t, key, { htm: method, htu: `${t.config.PUBLIC_URL}${path}`, accessToken, ...rest });
}
