/**
 * Why a passkey ceremony on a page did not succeed: the script's names for the JSON endpoints'
 * error codes (public/passkeys.js maps them), and for what the browser itself refused.
 */
export type PasskeyErrorCode =
  | 'expired'
  | 'invalid'
  | 'exists'
  | 'refused'
  | 'closed'
  | 'cancelled'
  | 'failed'
  /** The endpoint's own code: the session must confirm it is the person again (sudo mode). */
  | 'reauthentication_required';

/** Notices of the passkeys section after a form (`?notice=`). */
export const PASSKEY_NOTICES = [
  'passkey_added',
  'passkey_renamed',
  'passkey_removed',
  'unknown_passkey',
] as const;
export type PasskeyNotice = (typeof PASSKEY_NOTICES)[number];

/** The texts of passkeys: the security page's section, the sign-in buttons. */
export interface PasskeyMessages {
  heading: string;
  intro: string;
  none: string;
  created: string;
  lastUsed: string;
  never: string;
  backup: string;
  backedUp: string;
  notBackedUp: string;
  newName: string;
  rename: string;
  remove: string;
  /** The accessible names of a row's buttons, which say which passkey: "Rename Phone". */
  renameLabel: (name: string) => string;
  removeLabel: (name: string) => string;
  addHeading: string;
  addName: string;
  addNameHint: string;
  add: string;
  unsupported: string;
  working: string;
  signIn: string;
  signInOr: string;
  secondFactor: string;
  secondFactorText: string;
  /** `wait`: a 429 `rate_limited`, with `{n}` the seconds of its Retry-After, in the page's plural forms. */
  errors: Record<PasskeyErrorCode, string> & {
    wait: Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };
  };
  notices: Record<PasskeyNotice, string>;
}

export const enPasskeys: PasskeyMessages = {
  heading: 'Passkeys',
  intro:
    'A passkey signs you in with your fingerprint, face or screen lock instead of your password. It stays on your device or in your password manager; this service keeps only its public key.',
  none: 'You have no passkeys yet.',
  created: 'Added',
  lastUsed: 'Last used',
  never: 'never',
  backup: 'Backup',
  backedUp: 'Synced to your other devices',
  notBackedUp: 'On this device only',
  newName: 'New name',
  rename: 'Rename',
  remove: 'Remove',
  renameLabel: (name) => `Rename ${name}`,
  removeLabel: (name) => `Remove ${name}`,
  addHeading: 'Add a passkey',
  addName: 'Name',
  addNameHint: 'Optional: for example "Phone" or "Work laptop".',
  add: 'Add a passkey',
  unsupported: 'This browser cannot use passkeys.',
  working: 'Follow the instructions of your browser…',
  signIn: 'Sign in with a passkey',
  signInOr: 'or',
  secondFactor: 'Use a passkey',
  secondFactorText: 'A passkey of this account signs you in on its own.',
  errors: {
    expired: 'That took too long. Please try again.',
    invalid: 'The passkey could not be checked. Please try again.',
    exists: 'This passkey is already registered.',
    refused: 'This passkey is not registered for any account, or it could not be checked.',
    closed: 'This account can no longer sign in.',
    cancelled: 'The passkey request was cancelled.',
    failed: 'Something went wrong. Please try again.',
    wait: {
      one: 'Too many attempts. Please wait {n} second and try again.',
      other: 'Too many attempts. Please wait {n} seconds and try again.',
    },
    reauthentication_required: 'Please confirm it is you first: reload this page.',
  },
  notices: {
    passkey_added: 'The passkey was added.',
    passkey_renamed: 'The passkey was renamed.',
    passkey_removed: 'The passkey was removed.',
    unknown_passkey: 'That passkey is no longer registered.',
  },
};
