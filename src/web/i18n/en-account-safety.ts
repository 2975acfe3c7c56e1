import type { AccountSafetyTexts } from './account-safety-texts.js';

/** The English texts of the password form's choices, its confirmation and the e-mail confirmation. */
export const enAccountSafety: AccountSafetyTexts = {
  signOutDevices: 'Also sign out every device of the mobile app',
  signOutDevicesHint: 'Each device must sign in again with the new password.',
  revokeApps: 'Also end the access of every app I allowed',
  revokeAppsHint:
    'Recommended if someone else may have used your account: each app must be allowed again the next time you use it.',
  changedHeading: 'Your password is changed',
  changedText: 'Every other browser is signed out. This browser stays signed in, under a new session.',
  devicesSignedOut: 'Every device of the mobile app is signed out.',
  appsRevoked: 'Every app’s access is ended: each must be allowed again.',
  passkeysHeading: 'Your passkeys',
  passkeysIntro:
    'A passkey keeps signing in whoever registered it, whatever the password. Remove any passkey you do not recognise.',
  resetPasskeysIntro:
    'A passkey keeps signing in whoever registered it, whatever the password. If you do not recognise one of these, remove it once signed in:',
  resetPasskeysLink: 'Security and passkeys',
  passkeyCreated: 'Added',
  remove: 'Remove',
  removeLabel: (name) => `Remove the passkey ${name}`,
  toAccount: 'Go to your account',
  confirmFor: (email, username) => `Confirm that ${email} belongs to the account ${username}.`,
  changeFor: (email, username) => `Confirm that ${email} becomes the address of the account ${username}.`,
  notYours:
    'If you did not create this account or ask for this, do not press the button: close this page and nothing will change.',
  confirmedFor: (email, username) => `${email} is now confirmed for the account ${username}.`,
  claimWithheld:
    'Another account confirmed this address first: sites you sign in to with this account are told it is not verified.',
};
