import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as docs/pages.md fixes it: HMAC-SHA-1, 6 digits, 30-second steps. */
const ALGORITHM = 'SHA1';
const DIGITS = 6;
const PERIOD_SECONDS = 30;
/** RFC 6238 §5.2: one step either side allows for clock drift and the time to type. */
const WINDOW = 1;
/** RFC 4226 §4 R6: a key of at least 128 bits; 160 is the HMAC-SHA-1 block's own size (RFC 6238 §5.1). */
const KEY_BYTES = 20;

/** A new TOTP key, base32 (RFC 4648 §6), as authenticator apps take it. */
export function newTotpKey(): string {
  return new Secret({ size: KEY_BYTES }).base32;
}

/** The `otpauth://totp/…` URI of a key (the QR code's content), naming the service and the account. */
export function totpUri(input: { key: string; issuer: string; label: string }): string {
  return new TOTP({
    issuer: input.issuer,
    label: input.label,
    secret: Secret.fromBase32(input.key),
    algorithm: ALGORITHM,
    digits: DIGITS,
    period: PERIOD_SECONDS,
  }).toString();
}

/** Whether `code` has the shape of a TOTP code (six digits, spaces allowed). */
export function looksLikeTotpCode(code: string): boolean {
  return /^\d{6}$/.test(code.replace(/\s+/g, ''));
}

/**
 * The time step (RFC 6238 §4.2: floor(unix time / 30)) whose code `code` is, within one step of
 * `now`, or null. The caller still has to record the step as used.
 */
export function totpStepOf(key: string, code: string, now: Date): number | null {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const delta = TOTP.validate({
    token,
    secret: Secret.fromBase32(key),
    algorithm: ALGORITHM,
    digits: DIGITS,
    period: PERIOD_SECONDS,
    timestamp: now.getTime(),
    window: WINDOW,
  });
  return delta === null ? null : Math.floor(now.getTime() / 1000 / PERIOD_SECONDS) + delta;
}

/** The code of `key` at `at` (tests and the documentation's examples compute codes this way). */
export function totpCodeAt(key: string, at: Date): string {
  return TOTP.generate({
    secret: Secret.fromBase32(key),
    algorithm: ALGORITHM,
    digits: DIGITS,
    period: PERIOD_SECONDS,
    timestamp: at.getTime(),
  });
}

/** The key in groups of four characters, for reading it out or typing it by hand. */
export function groupedKey(key: string): string {
  return key.match(/.{1,4}/g)?.join(' ') ?? key;
}
