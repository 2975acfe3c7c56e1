/**
 * The texts of what a new password ends and what it does not: the password form's choices, its
 * confirmation, the passkeys listed after a change or a reset, and the e-mail confirmation page's
 * naming of the account. One object per language (en-account-safety.ts, ru-account-safety.ts).
 */
export interface AccountSafetyTexts {
  signOutDevices: string;
  signOutDevicesHint: string;
  revokeApps: string;
  revokeAppsHint: string;
  changedHeading: string;
  changedText: string;
  devicesSignedOut: string;
  appsRevoked: string;
  passkeysHeading: string;
  /** After a change: the passkeys still sign in, whoever registered them. */
  passkeysIntro: string;
  /** After a reset: the same, and where to remove them once signed in. */
  resetPasskeysIntro: string;
  resetPasskeysLink: string;
  passkeyCreated: string;
  remove: string;
  removeLabel: (name: string) => string;
  toAccount: string;
  /** `/email/verify`: the address and the account the button confirms it for. */
  confirmFor: (email: string, username: string) => string;
  /** `/email/verify` for a change of address. */
  changeFor: (email: string, username: string) => string;
  notYours: string;
  /** After confirming: the address, and the account it is now confirmed for. */
  confirmedFor: (email: string, username: string) => string;
  claimWithheld: string;
}
