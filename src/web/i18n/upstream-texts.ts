/**
 * The texts of sign-in through another provider: the buttons on the sign-in, sign-up and
 * re-authentication pages, the page after a first sign-in (a new account or a link), the link
 * confirmation, the account page's list of links, and the page that says a provider failed.
 * One object per language.
 */
export interface UpstreamTexts {
  /** "Continue with GitHub". */
  continueWith: (provider: string) => string;
  /** The divider between the password form and the providers' buttons. */
  or: string;
  /** On `/account/reauthenticate`: "Confirm with GitHub". */
  confirmWith: (provider: string) => string;

  continueHeading: string;
  /** "You signed in at GitHub as alice." */
  signedInAt: (provider: string, who: string) => string;
  newHeading: string;
  newIntro: string;
  usernameHint: string;
  create: string;
  /** Said when the provider gave an address it verified. */
  emailKept: (email: string) => string;
  /** Said when the provider gave an address it did not verify. */
  emailNotKept: string;
  haveHeading: string;
  haveIntro: (provider: string) => string;
  signInAndLink: string;
  usernameErrors: Record<'username_format' | 'username_reserved' | 'username_taken', string>;

  linkHeading: string;
  linkQuestion: (provider: string, who: string, username: string) => string;
  link: string;
  cancel: string;

  accountHeading: string;
  accountIntro: string;
  none: string;
  linkedOn: (date: string) => string;
  lastUsed: (date: string) => string;
  unlink: string;
  linkAnother: (provider: string) => string;
  notices: Record<'linked' | 'unlinked' | 'last_way', string>;

  problemHeading: (provider: string) => string;
  problems: Record<
    | 'unreachable'
    | 'invalid_response'
    | 'misconfigured'
    | 'refused'
    | 'stale'
    | 'unknown'
    | 'taken'
    | 'wrong_account'
    | 'disabled',
    (provider: string) => string
  >;
  /** The provider's own words, when it sent some. */
  providerSaid: string;
  tryAgain: string;
  otherWay: string;
}

/** The titles of the pages of sign-in through another provider. */
export type UpstreamPageTitles = Record<'upstream-continue' | 'upstream-link' | 'upstream-problem', string>;
