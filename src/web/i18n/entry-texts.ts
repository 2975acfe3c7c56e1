import type { INCIDENT_SEVERITIES, PLATFORM_STATUSES } from '../../modules/platform/platform.schemas.js';

/**
 * The texts of what a browser meets first: the landing page (`/`), and the sign-in and consent
 * pages' naming of the app that sent the person there. One object per language.
 */
export interface EntryTexts {
  /** The landing page's introduction, naming the service. */
  intro: (service: string) => string;
  signIn: string;
  account: string;
  createAccount: string;
  statusHeading: string;
  statuses: Record<(typeof PLATFORM_STATUSES)[number], string>;
  incidentsHeading: string;
  severities: Record<(typeof INCIDENT_SEVERITIES)[number], string>;
  /** Followed by the date an incident started. */
  since: string;
  statusAsJson: string;
  developersHeading: string;
  developersText: string;
  apiReference: string;
  discovery: string;
  /** Under the sign-in heading, when an app's authorization request is waiting. */
  continueTo: (client: string) => string;
  /** The alt text of an app's logo. */
  clientLogo: (client: string) => string;
  /** The alt text of the service's own logo, beside its name in the header. */
  serviceLogo: (service: string) => string;
}
