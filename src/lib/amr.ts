/**
 * Authentication method references (RFC 8176 §2) as docs/pages.md fixes them: what an id_token's
 * `amr` says about how the user signed in, and the `acr` that follows from it.
 */
export type AuthenticationMethod = 'pwd' | 'otp' | 'mfa' | 'hwk' | 'user';

/** A password alone. */
export const PASSWORD_ONLY: readonly AuthenticationMethod[] = ['pwd'];
/** A password, then a TOTP or recovery code. */
export const PASSWORD_AND_CODE: readonly AuthenticationMethod[] = ['pwd', 'otp', 'mfa'];
/** A passkey with user verification: the device (`hwk`) and the person (`user`), two factors in one. */
export const PASSKEY: readonly AuthenticationMethod[] = ['hwk', 'user', 'mfa'];

/** The only `acr` value the service asserts (and accepts in `acr_values`). */
export const MFA_ACR = 'mfa';

/** Whether a sign-in used a second factor. */
export function isMultiFactor(amr: readonly string[]): boolean {
  return amr.includes('mfa');
}

/** The id_token's `acr`: `mfa` when a second factor was used, otherwise none is asserted. */
export function acrOf(amr: readonly string[]): string | undefined {
  return isMultiFactor(amr) ? MFA_ACR : undefined;
}
