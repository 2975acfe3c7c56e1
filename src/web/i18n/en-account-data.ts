import type { Messages } from './messages.js';

/** The English texts of `/account/export`, `/account/delete` and the page after a deletion. */
export const enAccountData: Messages['dataPage'] = {
  yourData: 'Your data',
  yourDataText: 'Download a copy of everything this service stores about you, as a JSON file.',
  exportLink: 'Download your data',
  dangerZone: 'Danger zone',
  dangerZoneText:
    'Delete your account: you are signed out everywhere and every app loses access. This cannot be undone.',
  deleteLink: 'Delete your account',
  exportHeading: 'Download your data',
  exportIntro: 'The download is a JSON file with everything this service stores about you:',
  exportContents: [
    'your profile: username, display name, avatar, e-mail address and whether it is confirmed, verification level, game and tag, and the dates of your account;',
    'your premium periods;',
    'the apps you allowed, with what each may do, and their current access;',
    'the devices the mobile app is signed in on;',
    'your wallet balance and every entry of its history;',
    'your browser sessions: when they started and end, the browser and the address;',
    'whether two-step sign-in is on, and how many recovery codes are left;',
    'your passkeys: the name of each, when it was added and when it was last used;',
    'the security log entries about your account: sign-ins, consents, revocations and changes.',
  ],
  exportNoSecrets:
    'It contains no password, token or key: keep it private all the same, as it holds your personal data.',
  exportSubmit: 'Download',
  backToAccount: 'Back to your account',
  deleteHeading: 'Delete your account',
  deleteWarning: 'This cannot be undone. Once you confirm with your password:',
  deleteEffects: [
    'you are signed out on every browser and device;',
    'every app you allowed loses access, and their tokens stop working;',
    'your profile, e-mail address, premium periods and allowed apps are deleted;',
    'you no longer appear in the user search.',
  ],
  deleteKept:
    'Your username stays reserved, so nobody can take it over, and your wallet history is kept as a financial record, without your personal data.',
  exportFirst: { before: 'You may want to', link: 'download your data', after: ' first.' },
  deletePasswordHint: 'Enter your password to confirm.',
  deleteUsernameLabel: 'Username',
  deleteUsernameHint: (username) =>
    `Your account has no password: type its username, ${username}, to confirm.`,
  deleteSubmit: 'Delete my account',
  errors: {
    missing_password: 'Enter your password to confirm.',
    wrong_username: 'That is not the username of this account.',
    wrong_password: 'Wrong password. Your account was not deleted.',
  },
  deletedHeading: 'Your account has been deleted',
  deletedText: 'You have been signed out everywhere, and no app can use the account any more.',
  deletedSignUp: 'Create a new account',
};
