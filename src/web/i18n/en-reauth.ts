import type { ReauthTexts } from './reauth-texts.js';

/** The English texts of `/account/reauthenticate`. */
export const enReauth: ReauthTexts = {
  heading: 'Confirm it is you',
  intro: (minutes) =>
    `Changing how your account signs in, its e-mail address, downloading or deleting its data needs a recent proof that you are you. Enter your password; for the next ${minutes} minutes you will not be asked again.`,
  signedInAs: 'You are signed in as',
  passwordSubmit: 'Confirm',
  codeHeading: 'Or use a code',
  codeLabel: 'A code from your authenticator app, or a recovery code',
  codeSubmit: 'Confirm with the code',
  errors: {
    missing: 'Enter your password or a code.',
    wrong_password: 'Wrong password.',
    wrong_code: 'That code is wrong or was already used.',
  },
  backToAccount: 'Back to your account',
};
