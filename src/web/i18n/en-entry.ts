import type { EntryTexts } from './entry-texts.js';

/** The landing page and the naming of the app on the sign-in page, in English. */
export const enEntry: EntryTexts = {
  intro: (service) => `${service} is the account you use to sign in to the sites and apps that work with it.`,
  signIn: 'Sign in',
  account: 'Your account',
  createAccount: 'Create an account',
  statusHeading: 'Platform status',
  statuses: {
    operational: 'All systems operational',
    degraded: 'Some services are degraded',
    maintenance: 'Maintenance in progress',
  },
  incidentsHeading: 'Open incidents',
  severities: { minor: 'Minor', major: 'Major', critical: 'Critical' },
  since: 'since',
  statusAsJson: 'The status as JSON',
  developersHeading: 'For developers',
  developersText: 'Sites sign their users in with OAuth 2.0 and OpenID Connect.',
  apiReference: 'API reference',
  discovery: 'OpenID Connect discovery',
  continueTo: (client) => `to continue to ${client}`,
  clientLogo: (client) => `Logo of ${client}`,
  serviceLogo: (service) => `Logo of ${service}`,
};
