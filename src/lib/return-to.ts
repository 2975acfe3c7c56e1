/** Longest `return_to` accepted; anything longer is not a path a page of ours links to. */
export const RETURN_TO_MAX_LENGTH = 2000;

/** Printable ASCII without space: what a path of ours consists of (anything else is percent-encoded). */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/** How many rounds of percent-decoding are checked: enough for any double or triple encoding. */
const DECODE_ROUNDS = 4;

/** A path that stays on this origin: one leading `/`, no `//` or `/\` (protocol-relative), no backslash. */
function isLocalPathForm(value: string): boolean {
  return (
    value.startsWith('/') && !value.startsWith('//') && !value.includes('\\') && !hasControlCharacter(value)
  );
}

/** C0 controls, DEL and C1 controls: browsers strip tabs and newlines, so `/\t/evil.com` is `//evil.com`. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/**
 * The `return_to` value as a safe same-origin path, or null (an open-redirect attempt, or just
 * malformed). Every round of percent-decoding is checked, so `/%2F%2Fevil.com`, `/%5Cevil.com` and
 * `/%09/evil.com` are refused whatever a browser or a proxy might decode.
 */
export function safeReturnPath(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > RETURN_TO_MAX_LENGTH) return null;
  if (!PRINTABLE_ASCII.test(value)) return null;
  let current = value;
  for (let round = 0; round <= DECODE_ROUNDS; round++) {
    if (!isLocalPathForm(current)) return null;
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return null; // a malformed escape: not a path of ours
    }
    if (decoded === current) break;
    if (round === DECODE_ROUNDS) return null; // still changing: deliberately nested encodings
    current = decoded;
  }
  // Last word to the URL parser itself: resolved against a base, it must stay on that origin, and
  // dot segments must not fold it into a protocol-relative path (`/..//evil.com` is `//evil.com`).
  const base = 'http://return-to.invalid';
  try {
    const resolved = new URL(value, base);
    if (resolved.origin !== base || resolved.pathname.startsWith('//')) return null;
  } catch {
    return null;
  }
  return value;
}
