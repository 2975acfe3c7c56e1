import type { DevicePageTitles, DeviceTexts } from './device-texts.js';

/** The English texts of `/device`. */
export const enDevice: DeviceTexts = {
  heading: 'Sign in on a device',
  intro: 'Enter the code your console, TV or command-line tool shows.',
  codeLabel: 'Code',
  codeHint: '8 letters, like BCDF-GHJK; the dash is optional.',
  continue: 'Continue',
  errors: {
    missing: 'Enter the code your device shows.',
    wrong: 'That code is wrong or has expired. Check it on your device, or start again there.',
    locked: 'Too many wrong codes. Wait a few minutes, then try again.',
    busy: 'Too many wrong codes are being entered right now. Try again in a minute.',
  },
  confirmHeading: (app) => `${app} wants to sign in on a device`,
  deviceSays: 'The device says it is:',
  unknownDevice: 'The device did not say what it is.',
  checkCode: [
    'Go on only if your device shows ',
    ' and you started the sign-in on it yourself. Someone may have sent you this code to reach your account.',
  ],
  allowedBefore: 'You allowed this app before.',
  allowedTitle: 'Done',
  allowedText: (app) => `${app} is signed in on your device. You can go back to it now.`,
  deniedTitle: 'Denied',
  deniedText: (app) => `${app} was not signed in on the device.`,
  expiredText: 'This request has expired or was already answered. Start again on your device.',
  another: 'Enter another code',
};

export const enDeviceTitles: DevicePageTitles = {
  device: 'Sign in on a device',
  'device-confirm': 'Allow the device?',
  'device-done': 'Device sign-in',
};
