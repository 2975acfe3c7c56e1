import type { ReauthTexts } from './reauth-texts.js';

const forMinutes = (minutes: number) => (minutes === 1 ? 'minute' : `${minutes} minutes`);

/** The English texts of `/account/reauthenticate`. */
export const enReauth: ReauthTexts = {
  heading: 'Confirm it is you',
  intro: (minutes) =>
    `Changing how your account signs in, its e-mail address, downloading or deleting its data needs a recent proof that you are you. Enter your password; for the next ${forMinutes(minutes)} you will not be asked again.`,
  introWithoutPassword: (minutes) =>
    `Changing how your account signs in, its e-mail address, downloading or deleting its data needs a recent proof that you are you. Your account has no password: sign in again through the account you sign in with; for the next ${forMinutes(minutes)} you will not be asked again.`,
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
