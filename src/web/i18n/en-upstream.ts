import type { UpstreamTexts } from './upstream-texts.js';

/** The English texts of sign-in through another provider. */
export const enUpstream: UpstreamTexts = {
  continueWith: (provider) => `Continue with ${provider}`,
  or: 'or',
  confirmWith: (provider) => `Confirm with ${provider}`,

  continueHeading: 'Almost there',
  signedInAt: (provider, who) => `You signed in at ${provider} as ${who}.`,
  newHeading: 'New here? Choose a username',
  newIntro: 'It is how sites and other people see you, and it cannot be changed later.',
  usernameHint: '3–32 letters a–z, digits or _.',
  create: 'Create my account',
  emailKept: (email) => `Your address ${email} comes with it, as confirmed by the provider.`,
  emailNotKept:
    'The provider did not confirm your e-mail address, so it is not taken over; you can add one on your account page.',
  haveHeading: 'Already have an account here?',
  haveIntro: (provider) =>
    `Sign in to it the usual way (password or passkey, and your second step); your ${provider} account is linked to it only then. Accounts are never joined by a matching e-mail address alone.`,
  signInAndLink: 'Sign in and link',
  usernameErrors: {
    username_format: 'Use 3–32 letters a–z, digits or _, not only digits.',
    username_reserved: 'This username is reserved. Choose another.',
    username_taken: 'This username is taken (or looks too much like one that is). Choose another.',
  },

  linkHeading: 'Link this sign-in?',
  linkQuestion: (provider, who, username) =>
    `Link the ${provider} account ${who} to your account @${username}? You will then be able to sign in with either.`,
  link: 'Link',
  cancel: 'Cancel',

  accountHeading: 'Other accounts you sign in with',
  accountIntro:
    'Sign in here through an account you have elsewhere. Each is matched by that provider’s own id, never by e-mail.',
  none: 'None linked yet.',
  linkedOn: (date) => `Linked ${date}`,
  lastUsed: (date) => `last used ${date}`,
  unlink: 'Unlink',
  linkAnother: (provider) => `Link ${provider}`,
  notices: {
    linked: 'Linked. You can now sign in with it.',
    unlinked: 'Unlinked.',
    last_way:
      'This is the last way to sign in to your account. Set a password (through “Forgot password”) or add a passkey first.',
  },

  problemHeading: (provider) => `Signing in with ${provider} did not work`,
  problems: {
    unreachable: (provider) =>
      `${provider} did not answer. It may be down for a moment: try again in a few minutes, or sign in another way.`,
    invalid_response: (provider) =>
      `${provider} answered something we could not check, so we did not sign you in. Try again; if it keeps happening, sign in another way and tell the site’s operators.`,
    misconfigured: (provider) =>
      `Signing in with ${provider} is not set up correctly here. Sign in another way and tell the site’s operators.`,
    refused: (provider) =>
      `${provider} did not sign you in (you may have cancelled there). You can try again.`,
    stale: () =>
      'This sign-in has expired, was already used, or was started in another browser. Start again from the sign-in page.',
    unknown: () => 'Signing in with this provider is not offered here (any more). Sign in another way.',
    taken: (provider) =>
      `This ${provider} account is already linked to another account here. Sign in with it to reach that account, or unlink it there first.`,
    wrong_account: (provider) =>
      `This ${provider} account is not the one linked to the account you are signed in to, or you signed in as someone else meanwhile.`,
    disabled: () => 'This account is disabled. Contact the service’s operators.',
  },
  providerSaid: 'The provider said:',
  tryAgain: 'Try again',
  otherWay: 'Sign in another way',
};

/** The titles of the pages of sign-in through another provider. */
export const enUpstreamTitles = {
  'upstream-continue': 'Almost there',
  'upstream-link': 'Link this sign-in?',
  'upstream-problem': 'Sign-in did not work',
};
