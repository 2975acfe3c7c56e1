import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets the service must read back (a TOTP key: RFC 6238 needs the key itself, so it cannot be
 * hashed) are stored sealed: AES-256-GCM under a key derived from COOKIE_SECRET by HKDF-SHA256
 * (RFC 5869), with a purpose label so that no other use of the cookie secret shares the key. A
 * copy of the database alone opens nothing. Sealed with the current secret, opened with it or any
 * former one (COOKIE_SECRET_PREVIOUS), so the secret can be rotated.
 */
const VERSION = 'v1';
const NONCE_BYTES = 12; // NIST SP 800-38D §8.2: 96-bit nonces for GCM.
const TAG_BYTES = 16;

function keyOf(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `idp sealed ${purpose}`, 32));
}

/** `v1.<nonce>.<ciphertext+tag>` (base64url): `plain` sealed under the key for `purpose`. */
export function seal(plain: string, secret: string, purpose: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret, purpose), nonce);
  cipher.setAAD(Buffer.from(purpose));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}.${nonce.toString('base64url')}.${body.toString('base64url')}`;
}

/**
 * The plain text of a sealed value, trying each secret in turn; null when none opens it (another
 * secret, another purpose, or a value changed since: GCM's tag refuses it).
 */
export function open(sealed: string, secrets: readonly string[], purpose: string): string | null {
  const [version, nonceText, bodyText] = sealed.split('.');
  if (version !== VERSION || !nonceText || !bodyText) return null;
  const nonce = Buffer.from(nonceText, 'base64url');
  const body = Buffer.from(bodyText, 'base64url');
  if (nonce.length !== NONCE_BYTES || body.length < TAG_BYTES) return null;
  for (const secret of secrets) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', keyOf(secret, purpose), nonce);
      decipher.setAAD(Buffer.from(purpose));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(body.subarray(0, body.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      // Not this secret: try the next one.
    }
  }
  return null;
}
