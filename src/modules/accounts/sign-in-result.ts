/* The outcome of a password check (accounts.service.ts `authenticate`). */

export type SignInResult =
  /** `secondFactor`: the account has one, and the sign-in is not complete until it is used. */
  | { ok: true; user: { id: number; username: string }; secondFactor: boolean }
  /** `wrong_credentials` for an unknown user and for a wrong password alike; `disabled` only with the right password. */
  | { ok: false; reason: 'wrong_credentials' | 'disabled' };

/**
 * Which budget of failed checks an attempt counts against, once its account is known: the source
 * of a browser or device that signed in to this account before (`device:…`, `mobile:…`), or
 * undefined for anyone else, who share the account's untrusted budget.
 */
export type TrustedSource = (userId: number) => string | undefined | Promise<string | undefined>;
