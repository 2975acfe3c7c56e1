import { enDeviceTitles } from './en-device.js';
import { enUpstreamTitles } from './en-upstream.js';
import type { Messages } from './messages.js';

/** The English titles of the pages (the document's <title>), by template. */
export const enTitles: Messages['titles'] = {
  signin: 'Sign in',
  signup: 'Create an account',
  account: 'Your account',
  consent: 'Allow access?',
  error: 'Something went wrong',
  profile: 'Your profile',
  password: 'Change your password',
  export: 'Download your data',
  delete: 'Delete your account',
  deleted: 'Account deleted',
  verify: 'Confirm your e-mail address',
  verified: 'E-mail address confirmed',
  forgot: 'Forgot your password?',
  'forgot-sent': 'Check your e-mail',
  reset: 'Choose a new password',
  'reset-done': 'Password changed',
  'password-changed': 'Password changed',
  email: 'Your e-mail address',
  security: 'Security',
  'second-factor': 'Two-step sign-in',
  reauthenticate: 'Confirm it is you',
  ...enUpstreamTitles,
  ...enDeviceTitles,
  logout: 'Sign out?',
  'signed-out': 'Signed out',
  home: 'Welcome',
};
