import type { Messages } from './messages.js';

/** The English texts of `/password/forgot` and `/password/reset`, kept apart so that en.ts stays short. */
export const enPasswordReset: Messages['passwordReset'] = {
  forgotHeading: 'Forgot your password?',
  forgotIntro:
    'Enter your username or e-mail address. If it belongs to an account with an e-mail address, we send a link there to choose a new password.',
  login: 'Username or e-mail',
  loginMissing: 'Enter your username or e-mail address.',
  forgotSubmit: 'Send the link',
  backToSignIn: 'Back to sign-in',
  sentHeading: 'Check your e-mail',
  sentText:
    'If the username or address you entered belongs to an account with an e-mail address, a link to choose a new password is on its way there. It works once, for 30 minutes.',
  sentNothing:
    'No message after a few minutes? Check your spam folder, or ask again: only the newest link works.',
  resetHeading: 'Choose a new password',
  resetFor: 'For the account',
  correctFields: 'Correct the fields marked below.',
  revokeApps: 'Also end the access of every app I allowed',
  revokeAppsHint:
    'Recommended if someone else may have used your account: each app must be allowed again the next time you use it.',
  signedOutEverywhere:
    'You will be signed out on every browser and device of the mobile app, this one included.',
  resetSubmit: 'Change password',
  doneHeading: 'Your password is changed',
  doneText: 'You were signed out everywhere. Sign in with your new password.',
  signIn: 'Sign in',
};
