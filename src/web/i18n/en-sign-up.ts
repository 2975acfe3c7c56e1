import { COMMON_PASSWORDS_COUNT } from '../../lib/common-passwords.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../lib/password.js';
import type { SignUpTexts } from './sign-up-texts.js';

const commonCount = COMMON_PASSWORDS_COUNT.toLocaleString('en-GB');

/** The sign-up page, in English. */
export const enSignUp: SignUpTexts = {
  heading: 'Create an account',
  correctFields: 'Please correct the fields marked below.',
  usernameHint: '3–32 letters a–z, digits and _, not only digits.',
  emailHint:
    'It is the only way to recover your password if you forget it: the reset link is sent there. Without it, a forgotten password cannot be reset.',
  passwordHint: `At least ${PASSWORD_MIN_LENGTH} characters, and not one of the ${commonCount} most common passwords, which attackers try first.`,
  submit: 'Create account',
  haveAccount: 'Already have an account?',
  signIn: 'Sign in',
  problems: {
    username_format: 'Username must be 3–32 characters of letters a–z, digits and _, and not only digits.',
    username_reserved: 'This username is reserved; choose another one.',
    username_taken: 'This username is already taken; choose another one.',
    password_too_short: `Password must be at least ${PASSWORD_MIN_LENGTH} characters.`,
    password_too_long: `Password must be at most ${PASSWORD_MAX_LENGTH} characters.`,
    password_too_common:
      'This password is one of the most common ones, which attackers try first; choose another.',
    email_invalid: 'Enter a valid e-mail address, or leave the field empty.',
    email_too_long: 'The e-mail address must be at most 254 characters.',
  },
};
