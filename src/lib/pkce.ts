import { createHash } from 'node:crypto';

/**
 * PKCE (RFC 7636). Only S256 is supported: `plain` gives no protection when the authorization
 * request leaks, and every current client library can do S256.
 */

/** RFC 7636 §4.1: 43–128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~". */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** S256 of any verifier: base64url of 32 bytes, 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

export function isCodeVerifier(value: string): boolean {
  return VERIFIER.test(value);
}

export function isS256Challenge(value: string): boolean {
  return S256_CHALLENGE.test(value);
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
