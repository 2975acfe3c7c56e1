import type { SecurityTexts } from './security-texts.js';

/** The English texts of `/account/security` and `/signin/second-factor`. */
export const enSecurity: SecurityTexts = {
  accountLink: 'Two-step sign-in and recovery codes',
  heading: 'Security',
  stepUpNotice:
    'The site you are signing in to asks for a second factor. Set up an authenticator app below; then you go on to the site.',
  totpHeading: 'Authenticator app',
  totpOff:
    'Two-step sign-in is off. Turn it on, and after your password, signing in asks for a code from an app on your phone.',
  enrolStart: 'Set up an authenticator app',
  enrolScan:
    'Scan this QR code with an authenticator app (such as Aegis, FreeOTP, Google Authenticator or a password manager), or type the key into it. Then enter the code it shows.',
  qrLabel: 'QR code of the key for your authenticator app',
  keyLabel: 'Key',
  keyHint: 'Time-based, 6 digits, every 30 seconds. Spaces do not matter.',
  codeLabel: 'Code from the app (6 digits)',
  confirmSubmit: 'Turn on two-step sign-in',
  wrongCode:
    'That code is not right. Check that the time on your phone is correct, and enter the newest code.',
  totpOn:
    'Two-step sign-in is on: after your password, signing in asks for a code from your authenticator app.',
  enabledNotice: 'Two-step sign-in is now on.',
  disabledNotice: 'Two-step sign-in is now off.',
  recoveryHeading: 'Recovery codes',
  recoveryShownOnce:
    'Keep these codes somewhere safe, such as a password manager or on paper. Each one works once, in place of a code from the app, if you lose your phone. They are shown only now.',
  recoveryRemaining: {
    one: '{n} unused recovery code left.',
    other: '{n} unused recovery codes left.',
  },
  recoverySave: {
    copy: 'Copy the codes',
    copied: 'Copied. Paste them into your password manager, or somewhere else safe.',
    copyFailed: 'The codes could not be copied: select them and copy them yourself, or download them.',
    download: 'Download as a file',
    savedLabel: 'I have saved these codes somewhere safe',
    savedHint:
      'They are not shown again: only a fingerprint of each is kept, so nobody can show them to you later.',
    continue: 'Continue',
    fileHeading: (username, service) => `Recovery codes of the account ${username} at ${service}`,
    fileMade: (date) => `Made on ${date}. New codes replace all of these.`,
    fileNote:
      'Each code works once, in place of a code from your authenticator app. Keep this file somewhere safe.',
  },
  renewHint: 'New codes replace all the old ones.',
  renewSubmit: 'Make new recovery codes',
  disableHeading: 'Turn off two-step sign-in',
  disableHint: 'Confirm with your password or a code from the app. Your recovery codes stop working too.',
  passwordOrCode: 'Password, or a code from the app',
  disableSubmit: 'Turn off',
  disableWrong: 'That password or code is not right.',
  continueToSite: 'Continue to the site',
  backToAccount: 'Back to your account',
  stepHeading: 'Two-step sign-in',
  stepIntro: 'Your password was right. To finish signing in, enter a code from your authenticator app.',
  stepCodeLabel: 'Code from the app, or a recovery code',
  stepCodeHint: 'A code from the app has 6 digits. A recovery code looks like abcd-efgh-jkmn and works once.',
  stepSubmit: 'Sign in',
  stepWrong: 'That code is not right, or it was already used.',
  stepStartOver: 'Sign in with another account',
  stepExpired: 'Signing in took too long. Enter your password again.',
};
