/** The console's shared texts in English: its frame, entering, re-authenticating and leaving. */
export const commonEn = {
  console: 'Console',
  navigation: 'Console sections',
  areas: {
    dashboard: 'Dashboard',
    users: 'Users',
    clients: 'Applications',
    providers: 'Sign-in providers',
    audit: 'Audit log',
    platform: 'Platform',
  },
  roles: { owner: 'Owner', support: 'Support', auditor: 'Auditor' } as Record<string, string>,
  signedInAs: (username: string, role: string) => `${username} · ${role}`,
  session: 'Console session',
  leave: 'Leave the console',
  enter: {
    title: 'Enter the console',
    intro: 'The console opens with a second factor, for a short session of its own.',
    codeLabel: 'Code from your authenticator app',
    codeHint: '6 digits',
    submit: 'Enter',
    passkey: 'Use a passkey',
    wrongCode: 'That code is not right. Try the current one.',
    locked: 'Too many wrong codes: wait a few minutes, or use a passkey.',
    missing: 'Enter the code from your authenticator app.',
    passkeyFailed: 'The passkey could not be checked. Try again, or use a code.',
  },
  reauth: {
    title: 'Confirm it is you',
    intro: (minutes: number) =>
      `This action needs a second-factor proof from the last ${minutes} minutes. Confirm with a code or a passkey.`,
    submit: 'Confirm',
  },
  sessionPage: {
    title: 'Console session',
    role: 'Role',
    entered: 'Proved with',
    provedAt: 'Last proof',
    expires: 'Ends',
    methods: { totp: 'authenticator app', passkey: 'passkey' } as Record<string, string>,
  },
};
