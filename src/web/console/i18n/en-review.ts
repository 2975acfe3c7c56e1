/** The console's texts on applications that site owners registered (owners, approval, the wallet request), in English. */
export const reviewEn = {
  title: 'Owners and review',
  registeredVia: 'Registered',
  via: {
    operator: 'by an operator (the console or the CLI)',
    portal: 'by its owner in the developer portal',
    registration: 'through RFC 7591 dynamic registration',
  } as Record<string, string>,
  owners: 'Owners',
  noOwners: 'none: only operators manage it',
  role: { owner: 'owner', co_owner: 'co-owner' } as Record<string, string>,
  approved: (at: string) => `Approved on ${at}.`,
  awaiting:
    'Awaiting approval: under CLIENT_REGISTRATION=approval it signs in only its owners; under open its consent page says that it was not reviewed.',
  approve: 'Approve the application',
  walletRequested: (at: string) => `Its owners asked for the wallet right on ${at}.`,
  grantWallet: 'Grant the wallet right',
  deleted: (at: string) => `Deleted by its owners on ${at}: it signs no one in, for good.`,
  pendingFilter: 'Awaiting approval',
  allFilter: 'All applications',
  deletedFilter: 'Deleted',
  deletedTitle: 'Deleted applications',
  noDeleted: 'No application is deleted.',
  pendingTitle: 'Applications awaiting approval',
  pendingState: 'Awaiting approval',
  noPending: 'No application awaits approval.',
  done: {
    approved: 'The application is approved: it signs in every user now.',
    wallet_granted: 'The application has the wallet right now.',
  } as Record<string, string>,
};
