/**
 * Authentication method references (RFC 8176 §2) as docs/pages.md fixes them: what an id_token's
 * `amr` says about how the user signed in, and the `acr` that follows from it.
 */
export type AuthenticationMethod = 'pwd' | 'otp' | 'mfa' | 'hwk' | 'user' | 'fed';

/** A password alone. */
export const PASSWORD_ONLY: readonly AuthenticationMethod[] = ['pwd'];
/** A password, then a TOTP or recovery code. */
export const PASSWORD_AND_CODE: readonly AuthenticationMethod[] = ['pwd', 'otp', 'mfa'];
/** A passkey with user verification: the device (`hwk`) and the person (`user`), two factors in one. */
export const PASSKEY: readonly AuthenticationMethod[] = ['hwk', 'user', 'mfa'];

/**
 * A sign-in at another provider (docs/pages.md "Upstream sign-in"): RFC 8176 registers no value for
 * a delegated authentication, so the service uses `fed` (federated), as several providers do.
 */
export const UPSTREAM: readonly AuthenticationMethod[] = ['fed'];

/** A provider's sign-in, then a TOTP or recovery code. */
export const UPSTREAM_AND_CODE: readonly AuthenticationMethod[] = ['fed', 'otp', 'mfa'];

/** What a TOTP or recovery code adds to a session that already signed in (a step-up, an enrolment). */
export const CODE_FACTOR: readonly AuthenticationMethod[] = ['otp', 'mfa'];

/** The order methods are listed in, so that a merged `amr` reads as a fresh sign-in's would. */
const METHOD_ORDER: readonly AuthenticationMethod[] = ['pwd', 'fed', 'hwk', 'user', 'otp', 'mfa'];

/**
 * The methods a session holds after `added` were proved on it: those it already used, kept, plus
 * the new ones, each once. Nothing is invented: a session without `pwd` never gains it here.
 */
export function withMethods(
  held: readonly string[],
  added: readonly AuthenticationMethod[],
): AuthenticationMethod[] {
  const all = new Set<string>([...held, ...added]);
  const known = METHOD_ORDER.filter((method) => all.has(method));
  // A value from an older row that is not one of ours stays, after ours (nothing is dropped).
  const other = [...all].filter((method) => !METHOD_ORDER.includes(method as AuthenticationMethod));
  return [...known, ...(other as AuthenticationMethod[])];
}

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
