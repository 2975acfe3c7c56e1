/**
 * The texts of `/account/reauthenticate` ("sudo mode"): the page where a signed-in person proves
 * again who they are before changing how the account signs in. One object per language.
 */
export interface ReauthTexts {
  heading: string;
  /** Why the page asks: what it opens, and for how long. */
  intro: (minutes: number) => string;
  /** The same for an account without a password: a provider it signs in with proves it. */
  introWithoutPassword: (minutes: number) => string;
  /** Followed by @username. */
  signedInAs: string;
  passwordSubmit: string;
  codeHeading: string;
  codeLabel: string;
  codeSubmit: string;
  errors: Record<ReauthError, string>;
  backToAccount: string;
}

/** What a re-authentication attempt can get wrong. */
export type ReauthError = 'missing' | 'wrong_password' | 'wrong_code';
