import { describe, expect, it } from 'vitest';
import { isCodeVerifier, isS256Challenge, s256 } from '../../src/lib/pkce.js';

/** RFC 7636 Appendix B: the example verifier and its S256 challenge, as the RFC prints them. */
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE (RFC 7636)', () => {
  it('computes the S256 challenge of Appendix B', () => {
    expect(s256(RFC_VERIFIER)).toBe(RFC_CHALLENGE);
  });

  it('recognises verifiers and challenges by their grammar (§4.1, §4.2)', () => {
    expect(isCodeVerifier(RFC_VERIFIER)).toBe(true);
    expect(isCodeVerifier('a'.repeat(42))).toBe(false);
    expect(isCodeVerifier('a'.repeat(129))).toBe(false);
    expect(isCodeVerifier(`${'a'.repeat(42)}+`)).toBe(false);
    expect(isS256Challenge(RFC_CHALLENGE)).toBe(true);
    expect(isS256Challenge(`${RFC_CHALLENGE}=`)).toBe(false);
  });
});
