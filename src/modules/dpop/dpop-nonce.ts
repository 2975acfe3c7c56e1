import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * Server-provided DPoP nonces (RFC 9449 §8, §9), stateless and the same on every instance: the
 * HMAC-SHA256 of the current 5-minute window under a key derived from COOKIE_SECRET by HKDF (RFC
 * 5869, its own purpose label, as src/lib/sealed-secret.ts derives its keys). A nonce is accepted
 * during its window and the next, so one fetched just before a window ends still works.
 */
export const DPOP_NONCE_WINDOW_MS = 5 * 60 * 1000;

const keys = new Map<string, Buffer>();

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (key === undefined) {
    key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'idp dpop nonce', 32));
    keys.set(secret, key);
  }
  return key;
}

function nonceOf(secret: string, window: number): string {
  return createHmac('sha256', keyOf(secret)).update(`dpop-nonce:${window}`).digest('base64url');
}

/** The nonce to send in `DPoP-Nonce` now. */
export function currentDpopNonce(secret: string, now: Date): string {
  return nonceOf(secret, Math.floor(now.getTime() / DPOP_NONCE_WINDOW_MS));
}

/** Whether `nonce` is the nonce of the current window or of the one before (constant time). */
export function isValidDpopNonce(secret: string, nonce: string, now: Date): boolean {
  const window = Math.floor(now.getTime() / DPOP_NONCE_WINDOW_MS);
  const presented = Buffer.from(nonce);
  return [window, window - 1].some((each) => {
    const expected = Buffer.from(nonceOf(secret, each));
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
}
