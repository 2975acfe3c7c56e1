import type { LogoutTexts } from './logout-texts.js';

/** The English texts of RP-initiated logout. */
export const enLogout: LogoutTexts = {
  confirmHeading: 'Sign out?',
  clientAsks: (client) => `${client} asks to sign you out. It is the site at`,
  unknownAsks: 'A site asks to sign you out of this service.',
  signedInAs: 'You are signed in as',
  effect: 'To use this account in this browser again, you will need to sign in.',
  signOut: 'Sign out',
  staySignedIn: 'Stay signed in',
  signedOutHeading: 'You are signed out',
  signedOutText: 'You are no longer signed in to this service in this browser. You can close this page.',
  backTo: (client) => `Back to ${client}`,
  signInAgain: 'Sign in again',
};
