import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Identifier and secret prefixes. A prefix lets a leaked value be recognised by
 * secret scanners and tells a developer at a glance what they are holding.
 */
export const PREFIX = {
  clientId: 'pk_',
  clientSecret: 'sk_',
  authorizationCode: 'ac_',
  accessToken: 'at_',
  refreshToken: 'rt_',
  /** E-mail verification links. */
  emailVerification: 'ev_',
  /** Password reset links. */
  passwordReset: 'pr_',
  /** The password step of a mobile sign-in, waiting for its second factor (docs/mobile.md). */
  mfaToken: 'mfa_',
  /** RFC 7591 §3 initial access tokens: they register applications. */
  registrationToken: 'rit_',
  /** RFC 7592 §3 registration access tokens: they manage one registered application. */
  registrationAccessToken: 'rat_',
  /** RFC 8628 §3.2 device codes: what a device polls the token endpoint with. */
  deviceCode: 'dc_',
  /** Pushed authorization requests: RFC 9126 §2.2's URN, then the random part. */
  requestUri: 'urn:ietf:params:oauth:request_uri:',
} as const;

export type SecretKind = keyof typeof PREFIX;

/** Bytes of CSPRNG output behind each kind: 128 bits for the public client id, 256 bits for secrets. */
const ENTROPY_BYTES: Record<SecretKind, number> = {
  clientId: 16,
  clientSecret: 32,
  authorizationCode: 32,
  accessToken: 32,
  refreshToken: 32,
  emailVerification: 32,
  passwordReset: 32,
  mfaToken: 32,
  requestUri: 32,
  deviceCode: 32,
  registrationToken: 32,
  registrationAccessToken: 32,
};

/** A fresh prefixed value: the prefix, then base64url CSPRNG output. */
export function generateSecret(kind: SecretKind): string {
  return PREFIX[kind] + randomBytes(ENTROPY_BYTES[kind]).toString('base64url');
}

/**
 * SHA-256 of a high-entropy secret, base64url. Secrets, codes and tokens are stored only as this hash:
 * they carry 256 bits of entropy, so a fast hash is safe and a slow one would only slow every request.
 */
export function hashSecret(secret: string): string {
  // The one-shot hash: no Hash object per call (this runs on every bearer request).
  return hash('sha256', secret, 'base64url');
}

/** Constant-time check of a presented secret against a stored hash. */
export function secretMatchesHash(secret: string, storedHash: string): boolean {
  return hashesMatch(hashSecret(secret), storedHash);
}

/** Constant-time comparison of two hashes: a presented secret hashed once, checked against several. */
export function hashesMatch(presentedHash: string, storedHash: string): boolean {
  const presented = Buffer.from(presentedHash, 'utf8');
  const stored = Buffer.from(storedHash, 'utf8');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
