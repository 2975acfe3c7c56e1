/** The texts of `/account/security` and `/signin/second-factor`, one object per language. */
export interface SecurityTexts {
  /** The account page's link to the security page. */
  accountLink: string;
  heading: string;
  /** Shown when a site's sign-in asked for a second factor and the account has none yet. */
  stepUpNotice: string;
  totpHeading: string;
  totpOff: string;
  enrolStart: string;
  enrolScan: string;
  qrLabel: string;
  keyLabel: string;
  keyHint: string;
  codeLabel: string;
  confirmSubmit: string;
  wrongCode: string;
  totpOn: string;
  enabledNotice: string;
  disabledNotice: string;
  recoveryHeading: string;
  recoveryShownOnce: string;
  /** By CLDR plural category, as messages.ts's PluralForms (`{n}` is the count). */
  recoveryRemaining: Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };
  /** Saving the codes just shown: copy, download, then "I saved them" before going on. */
  recoverySave: {
    copy: string;
    copied: string;
    copyFailed: string;
    download: string;
    savedLabel: string;
    savedHint: string;
    continue: string;
    /** The downloaded file's first lines: whose codes, where, and when they were made. */
    fileHeading: (username: string, service: string) => string;
    fileMade: (date: string) => string;
    fileNote: string;
  };
  renewHint: string;
  renewSubmit: string;
  disableHeading: string;
  disableHint: string;
  passwordOrCode: string;
  disableSubmit: string;
  disableWrong: string;
  continueToSite: string;
  backToAccount: string;
  /** `/signin/second-factor`. */
  stepHeading: string;
  stepIntro: string;
  stepCodeLabel: string;
  stepCodeHint: string;
  stepSubmit: string;
  stepWrong: string;
  stepStartOver: string;
  /** On the sign-in page, after the 5 minutes of the password step ran out. */
  stepExpired: string;
}
